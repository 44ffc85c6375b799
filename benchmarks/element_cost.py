"""What one Streamlit element of each kind costs the browser's main thread.

Serves a page that is the bare page of :mod:`benchmarks.page_speed` (header, plotly chart, its
table) followed by ``--count`` elements of one kind (``?k=<kind>``), and for each kind loads it
warm (static files cached by a first load) under Chromium's performance trace for 1 s after the
chart is drawn, so that every element has rendered. Prints, per kind, the medians over
``--rounds`` of React's work (``react-dom``) and the main thread's busy time, and the extra per
element over the page without them.

Usage: ``python benchmarks/element_cost.py [--rounds 3] [--count 20]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script: its siblings
from page_speed import BARE, CHROMIUM, PROBE, REPO, VIEWPORT, _drawn_at, serve  # noqa: E402
from page_trace import traced_load  # noqa: E402

#: kind -> the Streamlit call drawing element ``i`` (key ``w{i}``).
KINDS = {
    "none": "",
    "page_link": 'st.page_link(PAGE, label=f"Link {i}", icon=":material/show_chart:")',
    "caption": 'st.caption(f"**Caption** {i}")',
    "info": 'st.info(f"Info {i}", icon=":material/info:")',
    "button": 'st.button("Button", key=f"w{i}")',
    "download_button": 'st.download_button("CSV", data=b"x", file_name="x.csv", key=f"w{i}")',
    "number_input": 'st.number_input("Runs", value=10, key=f"w{i}")',
    "text_input": 'st.text_input("Sizes", "64, 128", key=f"w{i}")',
    "toggle": 'st.toggle("Log y", key=f"w{i}")',
    "selectbox": 'st.selectbox("Pick", ["a", "b", "c"], key=f"w{i}")',
    "multiselect": 'st.multiselect("Pick", ["a", "b", "c"], default=["a"], key=f"w{i}")',
    "segmented_control": 'st.segmented_control("Unit", ["ns", "µs", "ms"], default="µs", key=f"w{i}")',
    "expander": 'st.expander(f"Expander {i}").write("x")',
    "horizontal_container": 'st.container(horizontal=True).caption("a")',
}


def page_source(bare: str) -> str:
    """The bare page's source, then the elements of the kind named in the URL."""
    calls = "\n".join(f"    {'if' if n == 0 else 'elif'} KIND == {kind!r}:\n        {call}"
                      for n, (kind, call) in enumerate((k, c) for k, c in KINDS.items() if c))
    return (bare + "\nPAGE = __file__\nKIND = st.query_params.get('k', 'none')\n"
            "for i in range(int(st.query_params.get('n', '0'))):\n" + calls + "\n")


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--count", type=int, default=20)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="element-cost-"))
    script = work / "page.py"
    bare = BARE.read_text(encoding="utf-8").replace(  # the bare page reads the repo's table
        "Path(__file__).resolve().parents[1]", f"Path({str(REPO)!r})")
    script.write_text(page_source(bare), encoding="utf-8")
    samples: dict[str, list[tuple[float, float]]] = {kind: [] for kind in KINDS}
    with serve(script, {}, work) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        for _ in range(args.rounds):
            for kind in KINDS:
                context = browser.new_context(viewport=VIEWPORT)
                context.add_init_script(PROBE)
                address = f"{url}/?k={kind}&n={args.count}"
                first = context.new_page()  # caches the static files and chunks
                first.goto(address)
                _drawn_at(first)
                _, ms = traced_load(browser, context.new_page(), address, work / "trace.json",
                                    settle_ms=1000)  # let every element render
                samples[kind].append((ms.get("react-dom", 0.0), ms["busy"]))
                context.close()
        browser.close()
    react0, busy0 = (statistics.median(s[i] for s in samples["none"]) for i in range(2))
    for kind, rows in samples.items():
        react, busy = (statistics.median(s[i] for s in rows) for i in range(2))
        print(f"{kind:20s} React {react:5.0f} ms ({(react - react0) / args.count:+5.1f} per element)"
              f"  main thread busy {busy:6.0f} ms ({(busy - busy0) / args.count:+5.1f} per element)")


if __name__ == "__main__":
    main()
