"""What each part of the dashboard costs the browser before the first chart is drawn.

Builds variants of this checkout in temporary folders, each without one more part, and loads
each (and the bare page of :mod:`benchmarks.page_speed`) cold and warm under Chromium's
performance trace until the first chart is drawn, interleaved in every round:

- ``dashboard``: as it is;
- ``no-bar-no-sidebar``: without the link bar and the sidebar (job selector, job form, job panel);
- ``no-bar-no-sidebar-no-controls``: also without the sweep page's controls (the deep-dive
  expander and the Quantity / Time unit / Normalise to / Log y row; their defaults are used).

Prints, per variant, the medians of: time to the chart (ms since navigation start, in the page:
:data:`page_speed.PROBE`), React's work on the renderer's main thread (``react-dom``) and the
main thread's busy time, both up to the chart. The variants are measurements of what the parts
cost, not products: nothing here changes the dashboard.

Usage: ``python benchmarks/page_variants.py [--rounds 4]``
"""

from __future__ import annotations

import argparse
import collections
import statistics
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script: its siblings
from page_speed import BARE, CHROMIUM, PROBE, REPO, VIEWPORT, _drawn_at, serve  # noqa: E402
from page_trace import traced_load  # noqa: E402

#: variant -> (file, text to find, replacement), applied in order; a text not found is an error.
CUTS = {
    "no-bar-no-sidebar": [
        ("app/streamlit_app.py", "            navigation.render_bar(by_section)\n", ""),
        ("app/streamlit_app.py", "        with st.sidebar:\n", "        if False:  # cut\n"),
    ],
}
CUTS["no-bar-no-sidebar-no-controls"] = CUTS["no-bar-no-sidebar"] + [
    ("app/app_pages/sweep.py", 'deep_dive_action.offer(bundle, "sweep")\n', ""),
    ("app/app_pages/sweep.py", 'cols = st.columns([3, 2.2, 3, 1.6], vertical_alignment="bottom")',
     "from types import SimpleNamespace\n"  # stand-ins that draw nothing and give the defaults
     "cols = [SimpleNamespace(segmented_control=lambda *a, default=None, **k: default,"
     " selectbox=lambda label, options, **k: options[0],"
     " toggle=lambda *a, value=False, **k: value)] * 4"),
]


def build(variant: str, into: Path) -> Path:
    """A copy of this checkout's tracked files (as they are on disk) with ``variant``'s cuts."""
    root = into / variant
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for name in filter(None, files):
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((REPO / name).read_bytes())
    for name, old, new in CUTS[variant]:
        path = root / name
        text = path.read_text(encoding="utf-8")
        if old not in text:
            raise SystemExit(f"{variant}: {name} no longer has {old!r}; update CUTS")
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return root


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="page-variants-"))
    roots = {"dashboard": REPO} | {v: build(v, work) for v in CUTS}
    results = str(work / "results")
    samples: dict[tuple[str, str], list[tuple[float, float, float]]] = collections.defaultdict(list)
    with ExitStack() as stack, sync_playwright() as pw:
        urls = {name: stack.enter_context(serve(root / "app" / "streamlit_app.py",
                                                {"KPROF_RESULTS_DIR": results,
                                                 "PYTHONPATH": str(root)}, root))
                for name, root in roots.items()}
        urls["bare"] = stack.enter_context(serve(BARE, {"PYTHONPATH": str(REPO)}))
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        for url in urls.values():  # the servers' first runs (imports) are not measured
            context = browser.new_context(viewport=VIEWPORT)
            context.add_init_script(PROBE)
            page = context.new_page()
            page.goto(url)
            _drawn_at(page)
            context.close()
        names = list(urls)
        for i in range(args.rounds):
            for name in names[i % len(names):] + names[:i % len(names)]:  # who goes first rotates
                context = browser.new_context(viewport=VIEWPORT)
                context.add_init_script(PROBE)
                for kind in ("cold", "warm"):
                    drawn, ms = traced_load(browser, context.new_page(), urls[name],
                                            work / f"{name}-{kind}.json")
                    samples[(name, kind)].append((drawn, ms.get("react-dom", 0.0), ms["busy"]))
                context.close()
        browser.close()
    for (name, kind), rows in sorted(samples.items(), key=lambda item: item[0][::-1]):
        drawn, react, busy = (statistics.median(r[i] for r in rows) for i in range(3))
        print(f"{kind:4s} {name:30s} chart {drawn:6.0f} ms  React {react:5.0f} ms  "
              f"main thread busy {busy:6.0f} ms  ({len(rows)} loads)")


if __name__ == "__main__":
    main()
