# Shared prelude of every observation driver (grader/assignments/<name>/driver.py; grader/drivers/__init__.py prepends it).
import numbers


def _plain(value):
    """JSON-safe copy of what the code under test returned; odd objects become their type name.

    numpy and pandas scalars count as the numbers they are (np.percentile returns np.float64, np.sum np.int64)."""
    if value is None or type(value) in (bool, int, str):
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        return value if value == value and abs(value) != float("inf") else repr(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return f"<{type(value).__name__}>"
