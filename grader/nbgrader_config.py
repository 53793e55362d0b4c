# nbgrader configuration for the course; grader/ copies it into each course directory it builds.
c = get_config()  # noqa: F821 (provided by traitlets when nbgrader loads this file)

c.CourseDirectory.course_id = "decode-scheduling"
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback"]

# Stubs: the @todo decorator on each answer cell turns this bare error into "TODO n ... not implemented".
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# Stock nbgrader only (the kit's configure(c) replaces Execute): a cell that runs past this is interrupted and the
# rest of the notebook still runs (nbgrader's Execute always runs past an error: allow_errors is not a setting there).
c.Execute.timeout = 30
c.Execute.interrupt_on_timeout = True

c.Exchange.assignment_dir = "."
