"""Instructor-side tooling: build notebooks, grade submissions, bundle releases.

Nothing here is shipped to students (see `make student-bundle`).
"""
