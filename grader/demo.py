"""`make demo`: the worked examples, then the instructor's pipeline end to end. Outputs under build/demo/."""
from __future__ import annotations

import filecmp
import re
import shutil
import sys
import time

import matplotlib

matplotlib.use("Agg")

import lab  # noqa: E402

from . import autograde, build, examples, reference  # noqa: E402
from .paths import BUILD_DIR, NOTEBOOKS_DIR  # noqa: E402

ASSIGNMENT = "02_decode_scheduling"


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def worked_examples(out) -> list:
    print("== 1. Worked examples (lab) ==")
    written = []
    for example in lab.BATCHING_EXAMPLES:
        print(f"\n-- {example.name}: tokens {[j['tokens'] for j in example.jobs]}, {example.slots} slots")
        print(lab.compare_policies(example.jobs, example.slots).to_string(float_format=lambda v: f"{v:.3f}"))
        path = out / f"slots_{slug(example.name.split(':')[0].split('(')[0])}.png"
        lab.plot_slots(example.jobs, example.slots, labels=example.labels).savefig(path, dpi=110)
        written.append(path)
    sim_class = reference.namespace(ASSIGNMENT)["DecodeSchedulerSim"]
    for name, scenario in lab.DECODE_SCENARIOS.items():
        events, arrivals = lab.play(sim_class(**scenario["sim"]), scenario["script"])
        print(f"\n-- decode scenario '{name}' (reference scheduler)")
        print(lab.request_summary(events).to_string())
        path = out / f"timeline_{slug(name)}.png"
        lab.plot_timeline(events, arrivals, title=f"{name} (reference scheduler)").savefig(path, dpi=110, bbox_inches="tight")
        written.append(path)
    return written


def instructor_pipeline(out) -> None:
    print("\n== 2. Release: regenerate the student edition ==")
    release_dir = out / "release"
    build.build_release([ASSIGNMENT], release_dir, out / "release-course")
    same = filecmp.cmp(release_dir / f"{ASSIGNMENT}.ipynb", NOTEBOOKS_DIR / f"{ASSIGNMENT}.ipynb", shallow=False)
    print(f"  matches the committed notebooks/{ASSIGNMENT}.ipynb: {'yes' if same else 'NO (run make notebooks)'}")
    print("\n== 3. Autograde the bundled example submissions ==")
    submissions = out / "submissions"
    shutil.rmtree(submissions, ignore_errors=True)
    for path in examples.write(examples.demo_submissions(ASSIGNMENT), submissions):
        print(f"  {path.name}")
    autograde.run(ASSIGNMENT, submissions, out / "grades")


def main() -> int:
    started = time.perf_counter()
    out = BUILD_DIR / "demo"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    pngs = worked_examples(out)
    instructor_pipeline(out)
    print(f"\n== Done in {time.perf_counter() - started:.0f} s. Outputs ==")
    print(f"  plots:           {', '.join(p.name for p in pngs)} in {out}")
    print(f"  student edition: {out / 'release' / (ASSIGNMENT + '.ipynb')}")
    print(f"  grades:          {out / 'grades' / 'grades.csv'}")
    print(f"  feedback:        {out / 'grades' / 'feedback'}/<student_id>.html")
    print(f"  report:          {out / 'grades' / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
