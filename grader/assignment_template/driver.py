# Observation driver for __NAME__. Runs inside a grading child: calls the exercise functions the notebook
# cells defined, with the given arguments, and reports what they returned or raised. It judges nothing: the
# parent compares with the reference. `_plain` comes from grader/runner/driver_common.py, which driver_source() prepends.


def observe(namespace, ops):
    observed = []
    for name, args in ops:
        try:
            observed.append({"value": _plain(namespace[name](*args))})
        except Exception as exc:  # noqa: BLE001
            observed.append({"error": type(exc).__name__})
    return observed
