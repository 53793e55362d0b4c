"""Every relative link in README.md and docs/*.md reaches a file of the repository, and, where it names an anchor
in a Markdown file, a heading of that file (GitHub's anchors)."""
import re
from pathlib import Path

import pytest

from conftest import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
CODE = re.compile(r"(`+)[^`]*?\1")


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: markup gone, lower case, punctuation dropped, each space a hyphen."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text
    text = text.replace("`", "").replace("*", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", FENCE.sub("", text), re.M):
        slug = anchor(heading)
        found.add(f"{slug}-{seen[slug]}" if seen.get(slug) else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return found


def links(text: str) -> list[str]:
    """The targets of the Markdown links of a text, leaving out code blocks and code spans."""
    return LINK.findall(CODE.sub("", FENCE.sub("", text)))


def broken(path: Path, text: str) -> list[str]:
    """Each relative link of `text` (the content of `path`) whose file or anchor is missing."""
    problems = []
    for target in links(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, ...
            continue
        file, _, fragment = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        where = f"{path.relative_to(ROOT)}: ({target})"
        if not dest.exists():
            problems.append(f"{where}: no such file")
        elif not dest.is_relative_to(ROOT):
            problems.append(f"{where}: outside the repository")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest.read_text(encoding="utf-8")):
            problems.append(f"{where}: no heading with that anchor")
    return problems


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path):
    assert broken(path, path.read_text(encoding="utf-8")) == []


def test_the_docs_link_to_each_other():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for doc in DOCS[1:]:
        assert f"(docs/{doc.name}" in readme, f"README.md does not link to docs/{doc.name}"


@pytest.mark.parametrize("plant, why", [
    ("[x](docs/architecure.md)", "no such file"),
    ("[x](docs/architecture.md#the-grading-sandbox-levels)", "no heading with that anchor"),
    ("[x](#for-teachers)", "no heading with that anchor"),
    ("[x](../outside.md)", "no such file"),
])
def test_a_broken_link_is_caught(plant, why):
    readme = ROOT / "README.md"
    found = broken(readme, readme.read_text(encoding="utf-8") + f"\n{plant}\n")
    assert len(found) == 1 and found[0].endswith(why), found


def test_links_in_code_are_not_links_and_anchors_follow_github():
    assert links("`[a](nowhere.md)`\n```\n[b](nowhere.md)\n```\n[c](here.md) ![img](pic.png)") == ["here.md"]
    assert anchor("How a TODO is graded, and why it cannot be subverted") == "how-a-todo-is-graded-and-why-it-cannot-be-subverted"
    assert anchor("The grading sandbox: levels, guarantees, limits") == "the-grading-sandbox-levels-guarantees-limits"
    assert anchor("Timings (make bench)") == "timings-make-bench"
    assert anchor("学生指南（简体中文）") == "学生指南简体中文"
    assert anchors("# A\n## A\n```\n# B\n```\n") == {"a", "a-1"}
