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

from . import autograde, build, reference, sample_submissions  # noqa: E402
from .paths import BUILD_DIR, NOTEBOOKS_DIR  # noqa: E402

ASSIGNMENT = "02_decode_scheduling"
ENGINE_ASSIGNMENT = "03_batch_scheduling"


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
    written += engine_examples(out)
    return written


def engine_examples(out) -> list:
    """Notebook 03's engine (reference answers) on a small workload: its latency table and two charts."""
    ns = reference.namespace(ENGINE_ASSIGNMENT)
    requests = lab.engine.poisson_requests(40, 10, seed=1, prompt_median=200, output_median=60, max_prompt=500, max_output=200)
    run = lab.engine.LLMEngine(ns["Scheduler"](num_blocks=256, block_size=16, max_num_batched_tokens=256)).run(requests)
    summary = ns["latency_summary"](run.records, ttft_slo_ms=500, tpot_slo_ms=50)
    print("\n-- engine step model (reference scheduler): 40 requests at 10/s, 256 KV blocks, budget 256 tokens")
    print("  " + ", ".join(f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}" for k, v in summary.items()))
    written = []
    for name, plot in (("engine_batch_composition", lab.engine.plot_batch_composition),
                       ("engine_kv_occupancy", lab.engine.plot_kv_occupancy)):
        path = out / f"{name}.png"
        plot(run.steps).savefig(path, dpi=110)
        written.append(path)
    return written


def instructor_pipeline(out) -> None:
    print("\n== 2. Release: regenerate the student editions ==")
    release_dir = out / "release"
    build.build_release([ASSIGNMENT, ENGINE_ASSIGNMENT], release_dir, out / "release-course")
    for name in (ASSIGNMENT, ENGINE_ASSIGNMENT):
        same = filecmp.cmp(release_dir / f"{name}.ipynb", NOTEBOOKS_DIR / f"{name}.ipynb", shallow=False)
        print(f"  matches the committed notebooks/{name}.ipynb: {'yes' if same else 'NO (run make notebooks)'}")
    for name, grades in ((ASSIGNMENT, "grades"), (ENGINE_ASSIGNMENT, f"grades-{ENGINE_ASSIGNMENT[:2]}")):
        print(f"\n== 3. Autograde the bundled example submissions of {name} ==")
        submissions = out / f"submissions-{name[:2]}"
        shutil.rmtree(submissions, ignore_errors=True)
        # 02: a whole class
        subs = sample_submissions.demo_class(name) if name == ASSIGNMENT else sample_submissions.demo_submissions(name)
        for path in sample_submissions.write(subs, submissions):
            print(f"  {path.name}")
        autograde.run(name, submissions, out / grades, term_secret="public")  # a made-up class: the public cases


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
    print(f"  grades:          {out / 'grades' / 'grades.csv'}, {out / 'grades-03' / 'grades.csv'}")
    print(f"  feedback:        {out / 'grades' / 'feedback'}/<student_id>.html")
    print(f"  report:          {out / 'grades' / 'report.md'}")
    print(f"  class report:    {out / 'grades' / 'class-report.html'} (and class-report.md, rules.csv): what to reteach")
    return 0


if __name__ == "__main__":
    sys.exit(main())
