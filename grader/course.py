"""Course-wide settings (course.toml) and what is derived from them: the notebooks' set-up code, badge URLs."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest brings tomli there
    import tomli as tomllib

from lab import __version__

from .paths import ROOT

COURSE_TOML = ROOT / "course.toml"
DIST_NAME = "decode-scheduling-lab"
WHEEL_NAME = f"decode_scheduling_lab-{__version__}-py3-none-any.whl"
SOURCE_ENV = "LAB_PIP_SOURCE"  # per-kernel override of the configured source (tests, a student's own mirror)
# The line a master's setup_imports cell carries where the set-up code goes (one template for every notebook).
SETUP_MARKER = "# <course set-up: imports lab, installing it if missing>"
REPO_RE = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
SOURCE_RE = re.compile(r"[^\s\"'`$\\{}]+")  # pasted into a shell command by %pip: no spaces, quotes or expansions

SETUP_TEMPLATE = '''\
# {comment}
import importlib
import os

LAB_PIP_SOURCE = os.environ.get("{env}") or "{source}"
try:
    import lab
except ImportError:
    print(f"{installing}")
    %pip install --quiet "{{LAB_PIP_SOURCE}}"
    importlib.invalidate_caches()
    try:
        import lab
    except ImportError:
        raise ImportError(
{failed}
        ) from None
    print("{installed}")
print(f"{using}")
'''
# The set-up cell runs before `lab` can be imported, so it cannot use lab.tr: each edition gets its own sentences.
# {LAB_PIP_SOURCE} and {version} are the cell's f-string fields; the failure's lines are joined into one message.
SETUP_TEXT = {
    "en": {
        "comment": "Set-up: use the course package `lab`; on a fresh cloud kernel (Colab, Kaggle, ModelScope) install it first.",
        "installing": "Installing the course package `lab` from {LAB_PIP_SOURCE} ...",
        "failed": ["Could not install the course package `lab` from {LAB_PIP_SOURCE}; pip says why above. ",
                   "This kernel needs internet access (on Kaggle: Settings > Internet), or upload the course wheel ",
                   "next to this notebook and run `%pip install {wheel}`."],
        "installed": "Installed: no restart is needed.",
        "using": "Using lab {version}",
        "unknown": "(unknown version)",
    },
    "zh": {
        "comment": "设置：使用课程包 `lab`；在全新的云端内核（Colab、Kaggle、ModelScope）上先安装它。",
        "installing": "正在从 {LAB_PIP_SOURCE} 安装课程包 `lab` ……",
        "failed": ["无法从 {LAB_PIP_SOURCE} 安装课程包 `lab`，原因见上方 pip 的输出。",
                   "这个内核需要能访问互联网（Kaggle 上：Settings > Internet）；或者把课程的 wheel 文件上传到",
                   "本 notebook 所在的文件夹，再运行 `%pip install {wheel}`。"],
        "installed": "安装完成：无需重启内核。",
        "using": "正在使用 lab {version}",
        "unknown": "（版本未知）",
    },
}


class CourseConfigError(ValueError):
    """course.toml is missing a setting or has one that cannot work."""


@dataclass(frozen=True)
class Course:
    repo: str
    branch: str
    lab_pip_source: str

    @property
    def pip_source(self) -> str:
        """What the set-up cell installs: the configured source, else the student repository's wheel."""
        return self.lab_pip_source or f"https://raw.githubusercontent.com/{self.repo}/{self.branch}/dist/{WHEEL_NAME}"

    def binder_url(self, notebook: str) -> str:
        return f"https://mybinder.org/v2/gh/{self.repo}/{self.branch}?labpath={quote('notebooks/' + notebook, safe='')}"

    def colab_url(self, notebook: str) -> str:
        return f"https://colab.research.google.com/github/{self.repo}/blob/{self.branch}/notebooks/{notebook}"

    def repo_url(self) -> str:
        return f"https://github.com/{self.repo}"


def load(path: Path = COURSE_TOML) -> Course:
    """The settings in course.toml, validated."""
    try:
        student = tomllib.loads(path.read_text(encoding="utf-8"))["student"]
        course = Course(str(student["repo"]), str(student["branch"]), str(student.get("lab_pip_source", "")).strip())
    except FileNotFoundError:
        raise CourseConfigError(f"{path} is missing: it holds the course-wide settings (README, publishing)") from None
    except (KeyError, tomllib.TOMLDecodeError) as exc:
        raise CourseConfigError(f"{path}: [student] needs repo and branch ({type(exc).__name__}: {exc})") from None
    if not REPO_RE.fullmatch(course.repo):
        raise CourseConfigError(f"{path}: repo must be a GitHub owner/name, got {course.repo!r}")
    if not SOURCE_RE.fullmatch(course.branch) or not SOURCE_RE.fullmatch(course.pip_source):
        raise CourseConfigError(f"{path}: branch and lab_pip_source may not contain spaces, quotes, $, {{ or }}, "
                                f"got {course.branch!r} and {course.pip_source!r}")
    return course


def setup_code(course: Course | None = None, language: str = "en") -> str:
    """The set-up code every notebook starts with: import lab; only if that fails, %pip install it and retry.

    Its messages are in `language`: the edition's, since lab.set_language cannot run before lab is there."""
    course, text = course or load(), SETUP_TEXT[language]
    # the first line names the source (an f-string), the others are plain; no sentence holds a double quote
    failed = "\n".join(f'            {"f" if i == 0 else ""}"{line.replace("{wheel}", WHEEL_NAME)}"'
                       for i, line in enumerate(text["failed"]))
    using = text["using"].replace("{version}", f"{{getattr(lab, '__version__', {text['unknown']!r})}}")
    return SETUP_TEMPLATE.format(env=SOURCE_ENV, source=course.pip_source, comment=text["comment"],
                                 installing=text["installing"], failed=failed, installed=text["installed"], using=using)


def expand(source: str, course: Course | None = None, language: str = "en") -> str:
    """A master cell's source with its set-up marker replaced by the set-up code in `language`."""
    if SETUP_MARKER not in source:
        raise CourseConfigError(f"the setup_imports cell must contain the line {SETUP_MARKER!r}")
    return source.replace(SETUP_MARKER, setup_code(course, language), 1)
