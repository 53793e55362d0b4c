"""What every hidden suite is made of (base.py); each assignment's suite is grader/assignments/<name>/suite.py."""
