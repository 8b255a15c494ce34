"""Shared plotting helpers of the notebooks (notebooks/*.ipynb, written by
make_notebooks.py): where results and figures are, one style for paper
figures, colours, device display names and the checks a venue makes.

Figures are sized for a 3.5 in column (COLUMN_IN) or a 7 in page width
(PAGE_IN) and saved at that size, so text is never scaled: every text is at
least MIN_FONT_PT (7 pt); `save()` refuses a figure with smaller text or
another width. PDFs embed TrueType fonts (pdf.fonttype 42: no Type 3 fonts;
scripts/check_figures.sh checks with pdffonts). Colours are the Okabe-Ito
palette (safe for the common colour-vision deficiencies); policies that read
the future (oracles) are drawn dashed and labelled as upper bounds.

Where things are (environment variables, as scripts/figures.sh sets them):
  DVFSIM_RESULTS_DIR   experiment results, <dir>/<experiment>/results.csv
                       (default: results/ of the repository); a single file
                       with $<EXPERIMENT>_RESULTS (e.g. SWITCH_LATENCY_RESULTS)
  DVFSIM_FIGURES_DIR   where figures go. Default: results/figures/ of the
                       repository, so that running a notebook by hand never
                       overwrites the committed figures of notebooks/figures/
                       (only scripts/figures.sh writes those).
  DVFSIM_SOURCE_DIR    the repository (default: the parent of notebooks/)
"""
import io
import os
import pathlib

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import PIL.Image
import pandas as pd

HERE = pathlib.Path(__file__).resolve().parent
REPO = pathlib.Path(os.environ.get("DVFSIM_SOURCE_DIR") or HERE.parent).resolve()

COLUMN_IN = 3.5  # one column of a two-column paper
PAGE_IN = 7.0  # the full text width
MIN_FONT_PT = 7.0
FONT_PT = 8.0

# Okabe & Ito (2008), "Color universal design": distinguishable with the
# common colour-vision deficiencies and in greyscale by lightness.
OKABE_ITO = {
    "blue": "#0072B2", "orange": "#E69F00", "green": "#009E73", "vermillion": "#D55E00",
    "sky": "#56B4E9", "purple": "#CC79A7", "yellow": "#F0E442", "black": "#000000",
}
PALETTE = [OKABE_ITO[c] for c in ("blue", "orange", "green", "vermillion", "sky", "purple",
                                  "black", "yellow")]

POLICY_ORDER = ["latency-oracle", "kernel-oracle", "kernel-predictive", "latency-aware", "pass-level",
                "static-best", "static", "max", "power-limit", "native", "perseus", "perseus+kernel"]
COLORS = {
    "kernel-oracle": OKABE_ITO["blue"], "kernel-predictive": OKABE_ITO["orange"],
    "latency-aware": OKABE_ITO["green"], "pass-level": OKABE_ITO["vermillion"],
    "static-best": OKABE_ITO["purple"], "static": OKABE_ITO["sky"], "max": OKABE_ITO["black"],
    "power-limit": OKABE_ITO["yellow"], "native": "#777777",
    # beyond the eight Okabe-Ito colours: Paul Tol's "muted" wine, indigo and
    # teal (also safe for the common colour-vision deficiencies)
    "latency-oracle": "#882255", "perseus": "#332288", "perseus+kernel": "#44AA99",
}
MARKERS = dict(zip(POLICY_ORDER, "hosD^v<>PxX*p"))
# Policies that read the future (`dvfsim policies` marks them "[oracle]"):
# their savings are upper bounds. Results files say it per run (column
# `oracle`); this list serves plots of data without that column.
ORACLES = {"kernel-oracle", "static-best", "latency-oracle", "power-limit"}

# Published values that a figure reproduces, with their source.
REFERENCES = {
    # Spaan et al., Table 2 (docs/policies.md): RTX 3080 Ti, GPT-3 XL training
    # step, no slowdown allowed: energy saving in %, per-kernel (global) and per-pass.
    "table2_3080ti": {
        "source": "Spaan et al., Table 2",
        "energy_saving_pct": {"kernel-oracle (global)": {"predicted": 15.64, "measured": 14.6},
                              "pass-level": {"predicted": 2.07}},
    },
}


def style():
    """The paper style: TrueType fonts in PDF, 8 pt text (7 pt smallest),
    thin lines, the colour-blind-safe cycle, reproducible files."""
    plt.rcParams.update({
        "pdf.fonttype": 42, "ps.fonttype": 42, "svg.fonttype": "none", "svg.hashsalt": "dvfsim",
        "font.size": FONT_PT, "axes.titlesize": FONT_PT, "axes.labelsize": FONT_PT,
        "xtick.labelsize": MIN_FONT_PT, "ytick.labelsize": MIN_FONT_PT,
        "legend.fontsize": MIN_FONT_PT, "legend.title_fontsize": MIN_FONT_PT,
        "figure.titlesize": FONT_PT, "figure.labelsize": FONT_PT,
        "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
        "axes.grid": True, "grid.alpha": 0.3, "grid.linewidth": 0.5,
        "axes.linewidth": 0.6, "lines.linewidth": 1.2, "lines.markersize": 3.5,
        "xtick.major.width": 0.6, "ytick.major.width": 0.6,
        "figure.dpi": 110, "savefig.dpi": 300, "figure.constrained_layout.use": True,
        "legend.frameon": False,
    })


style()


def figure(width="page", height=None, **kw):
    """A figure of a column ("column", 3.5 in) or page ("page", 7 in) width."""
    w = {"column": COLUMN_IN, "page": PAGE_IN}.get(width, width)
    return plt.subplots(figsize=(w, height or 0.62 * w), **kw)


class MissingResults(FileNotFoundError):
    """A results file that is not there yet, with the command that makes it.
    IPython shows only the message (no traceback)."""

    def _render_traceback_(self):
        return [f"MissingResults: {self}"]


def results_dir():
    return pathlib.Path(os.environ.get("DVFSIM_RESULTS_DIR") or REPO / "results")


def figures_dir():
    d = pathlib.Path(os.environ.get("DVFSIM_FIGURES_DIR") or REPO / "results" / "figures")
    d.mkdir(parents=True, exist_ok=True)
    return d


def results_path(experiment):
    var = experiment.upper().replace("-", "_") + "_RESULTS"
    return pathlib.Path(os.environ.get(var) or results_dir() / experiment / "results.csv")


def load_results(experiment, quiet=False):
    """(all rows, the rows with status ok) of an experiment's results.csv.
    MissingResults naming the sweep to run when it is not there."""
    path = results_path(experiment)
    if not path.is_file():
        raise MissingResults(
            f"no results for experiment '{experiment}': {path} does not exist. Run the sweep "
            f"first: `scripts/figures.sh` (all figures), or `dvfsim sweep "
            f"experiments/{experiment}.yaml --out {path.parent}`; or point "
            f"DVFSIM_RESULTS_DIR (or {experiment.upper().replace('-', '_')}_RESULTS) at it.")
    raw = pd.read_csv(path, keep_default_na=False, na_values=[""])
    if "status" not in raw.columns:
        raise ValueError(f"{path}: no 'status' column; is this a results.csv of `dvfsim sweep`?")
    failed = raw[raw["status"] != "ok"]
    if len(failed) and not quiet:
        print(f"{len(failed)} failed run(s), left out:")
        print(failed[["run_id", "error"]].to_string(index=False))
    df = raw[raw["status"] == "ok"].copy()
    if not quiet:
        print(f"{path}: {len(df)} runs")
    return raw, df


def ordered(values, order=POLICY_ORDER):
    values = list(dict.fromkeys(values))
    return [v for v in order if v in values] + [v for v in values if v not in order]


_DISPLAY = {}


def display_name(device):
    """The GPU's name from its device file (display_name), without the
    vendor: "GeForce RTX 3080 Ti" for rtx3080ti; the name itself if unknown."""
    if device not in _DISPLAY:
        name = device
        path = REPO / "models" / "devices" / f"{device}.yaml"
        if path.is_file():
            for line in path.read_text().splitlines():
                if line.startswith("display_name:"):
                    name = line.split(":", 1)[1].strip().strip("'\"")
                    break
        _DISPLAY[device] = name.removeprefix("NVIDIA ").strip()
    return _DISPLAY[device]


def is_oracle(policy, df=None):
    if df is not None and "oracle" in df.columns:
        rows = df[df["policy"] == policy]
        if len(rows):
            return str(rows["oracle"].iloc[0]).lower() == "true"
    return policy in ORACLES


def policy_label(policy, df=None):
    return f"{policy} (oracle: upper bound)" if is_oracle(policy, df) else policy


def policy_style(policy, df=None):
    """Line keyword arguments: colour, marker, dashed for an oracle."""
    return dict(color=COLORS.get(policy), marker=MARKERS.get(policy, "o"),
                ls="--" if is_oracle(policy, df) else "-", label=policy_label(policy, df))


def config_label(row):
    """A run's policy, with ", free switches" when it ran with switch_latency_us=0
    (experiments that run one policy both ways, e.g. step_policies)."""
    lat = row.get("switch_latency_us")
    free = lat is not None and not (isinstance(lat, float) and np.isnan(lat)) and str(lat) != "" \
        and float(lat) == 0
    return row["policy"] + (", free switches" if free else "")


def run_file(results_csv, row, name):
    """A file of one sweep run (kernels.csv, timeline.csv, summary.json, ...),
    with a MissingResults naming --full-outputs when the timeline is not there."""
    path = pathlib.Path(results_csv).parent / row["run_dir"] / name
    if not path.is_file():
        hint = (" (timeline.csv and trace.json are written only by `dvfsim sweep --full-outputs`;"
                " scripts/figures.sh passes it for this experiment)") if name in ("timeline.csv", "trace.json") else ""
        raise MissingResults(f"{path} does not exist{hint}")
    return path


def read_kernels(path):
    """A run's kernels.csv (`path`: the file or its run directory) with the
    kernel and operator names joined back from names.csv beside it (`name`,
    `operator` after `iteration`; kernels.csv holds name_id and operator_id)."""
    path = pathlib.Path(path)
    run_dir = path if path.is_dir() else path.parent
    kernels = pd.read_csv(run_dir / "kernels.csv", keep_default_na=False, na_values=[""])
    names_file = run_dir / "names.csv"
    if not names_file.is_file():
        raise MissingResults(f"{names_file} does not exist (kernels.csv names kernels by id; "
                             "names.csv, written beside it, holds the names)")
    names = pd.read_csv(names_file, keep_default_na=False, na_values=[""], dtype={"name": str})
    table = names.set_index("name_id")["name"].fillna("")
    at = kernels.columns.get_loc("iteration") + 1
    kernels.insert(at, "name", kernels["name_id"].map(table).fillna("").astype(str))
    kernels.insert(at + 1, "operator", kernels["operator_id"].map(table).fillna("").astype(str))
    return kernels


def latency_label(us, _pos=None):
    if us >= 1e6:
        return f"{us / 1e6:g} s"
    if us >= 1e3:
        return f"{us / 1e3:g} ms"
    return f"{us:g} µs"


def _texts(fig):
    for t in fig.findobj(matplotlib.text.Text):
        if t.get_visible() and t.get_text().strip():
            yield t


def check_figure(fig):
    """Errors a venue would find: text under MIN_FONT_PT, a width other than
    a column or a page."""
    problems = []
    w = fig.get_size_inches()[0]
    if not any(abs(w - x) < 1e-6 for x in (COLUMN_IN, PAGE_IN)):
        problems.append(f"width {w:g} in (want {COLUMN_IN:g} or {PAGE_IN:g} in)")
    small = sorted({(t.get_fontsize(), t.get_text()[:30]) for t in _texts(fig)
                    if t.get_fontsize() < MIN_FONT_PT - 1e-9})
    if small:
        problems.append(f"{len(small)} text(s) under {MIN_FONT_PT:g} pt, e.g. " +
                        ", ".join(f"{s:g} pt '{x}'" for s, x in small[:3]))
    return problems


def save(fig, stem):
    """PNG and PDF under figures_dir() at the figure's size (no cropping: the
    size is the size in the paper), without timestamps (reproducible files)."""
    problems = check_figure(fig)
    if problems:
        raise ValueError(f"figure {stem}: " + "; ".join(problems))
    d = figures_dir()
    # The PNG is the on-screen preview (README, docs): 150 dpi, 256 colours;
    # the PDF is the vector figure for a paper. Full-colour 300 dpi previews
    # had made the figures 5 MB of the repository, which travels whole to the
    # GPU machine on every device call (docs/contributing.md).
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=150, metadata={"Software": None})
    preview = PIL.Image.open(buf).convert("RGB").quantize(
        colors=256, method=PIL.Image.Quantize.MEDIANCUT, dither=PIL.Image.Dither.NONE)
    preview.save(d / f"{stem}.png", optimize=True)
    fig.savefig(d / f"{stem}.pdf", metadata={"CreationDate": None, "Producer": None})
    print("wrote", d / f"{stem}.png", "and .pdf")


def write_table(table, stem, **kw):
    """A figure's numbers as CSV beside it."""
    path = figures_dir() / f"{stem}.csv"
    table.to_csv(path, **kw)
    return path
