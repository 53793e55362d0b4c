# Cases of the visible check cells, replayed as hidden scenarios (grader/contract.py); its driver_source()
# appends this to every driver. A scenario ["visible check", call] runs one case of a check cell: the child ran the
# check cells' definitions after the answer cells, so its helpers and test functions are in the namespace. For the
# call, the check's expect helpers are swapped for ones that record each check's outcome, judged by lab.checks.same
# as in the notebook, and what the answer gave where a check fails. The grader compares the records with the
# reference's (all held), so a case fails exactly where the visible check would. A case whose checks state several
# rules is split among them: ["visible check", call, [numbers]] reports only the checks its rule takes.
import lab.checks as _lab_checks

_SAME = _lab_checks.same   # taken when the driver loads, before any cell runs
_observe_ops = observe  # noqa: F821 - the driver's own, defined above


def _visible(namespace, call):
    log = []

    def expect(actual, expected, rule=""):
        log.append({"held": True} if _SAME(actual, expected) else {"held": False, "seen": _plain(actual)})  # noqa: F821

    def expect_true(condition, rule="", detail=""):
        log.append({"held": True} if condition else {"held": False, "seen": _plain(detail)})  # noqa: F821

    def expect_raises(exc_type, fn, rule=""):
        try:
            fn()
        except exc_type:
            log.append({"held": True})
            return
        except Exception as exc:  # noqa: BLE001 - another error is a broken rule, as in lab.checks
            log.append({"held": False, "seen": f"raised {type(exc).__name__}"})
            return
        log.append({"held": False, "seen": "raised nothing"})

    swapped = {"expect": expect, "expect_true": expect_true, "expect_raises": expect_raises, "passed": lambda *a, **k: None}
    saved = {name: namespace[name] for name in swapped if name in namespace}
    namespace.update(swapped)
    try:
        eval(compile(call, "<visible check>", "eval"), namespace)
    except Exception as exc:  # noqa: BLE001 - the case stops where the notebook's would
        log.append({"error": type(exc).__name__})
    finally:
        for name in swapped:
            namespace.pop(name, None)
        namespace.update(saved)
    return log


def _taken(log, checks):
    """The records of the checks a rule takes (numbered from 1), where a case's checks state several rules."""
    return log if checks is None else [log[n - 1] if n <= len(log) else {"absent": True} for n in checks]


def observe(namespace, ops):
    if ops and all(op[0] == "visible check" for op in ops):
        return [{"value": _taken(_visible(namespace, op[1]), op[2] if len(op) > 2 else None)} for op in ops]
    return _observe_ops(namespace, ops)
