"""A correct answer written another way than the reference: it must get full marks (tests/grader/test_new_assignment.py)."""
ANSWERS = {
    "todo1": '''@todo("TODO 1")
def total_tokens(requests: list[dict]) -> int:
    """The tokens all the requests need, prompt and output."""
    total = 0
    for request in requests:
        total += request["output"]
        total += request["prompt"]
    return total
''',
    "todo2": '''@todo("TODO 2")
def fcfs_order(requests: list[dict]) -> list[int]:
    """The request ids in first-come-first-served order."""
    return [rid for _, rid in sorted((request["arrival"], request["id"]) for request in requests)]
''',
}
