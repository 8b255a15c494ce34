#!/usr/bin/env python3
"""Writes the notebooks of notebooks/ from the cells below, so that they stay
reviewable as ordinary Python: edit this file, run it, commit both.

    /usr/bin/python3 notebooks/make_notebooks.py          # write the notebooks
    /usr/bin/python3 notebooks/make_notebooks.py --check  # exit 1 if they differ (CI)

Shared code (paths, the paper style, colours, device names, save()) lives in
notebooks/dvfsim_plots.py. Each notebook reads one experiment's results.csv
(written by `dvfsim sweep`): from $<EXPERIMENT>_RESULTS if set (e.g.
SWITCH_LATENCY_RESULTS=path/results.csv), else
$DVFSIM_RESULTS_DIR/<experiment>/results.csv, else results/<experiment>/ of the
repository. Figures go to $DVFSIM_FIGURES_DIR, by default results/figures/:
only scripts/figures.sh writes the committed notebooks/figures/.
"""
import argparse
import json
import pathlib
import sys
import textwrap

HERE = pathlib.Path(__file__).resolve().parent


def md(text):
    return {"cell_type": "markdown", "metadata": {}, "source": textwrap.dedent(text).strip("\n")}


def code(text):
    return {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
            "source": textwrap.dedent(text).strip("\n")}


def setup(experiment):
    """The first code cell: the shared plotting module, the experiment's results."""
    return code('''
        import json, os, pathlib, sys
        import numpy as np
        import pandas as pd
        import matplotlib
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter

        # notebooks/dvfsim_plots.py: paths, paper style, colours, device names, save()
        sys.path.insert(0, str(pathlib.Path(os.environ.get("DVFSIM_SOURCE_DIR", "..")) / "notebooks"))
        import dvfsim_plots as dp
        from dvfsim_plots import COLORS, MARKERS, ordered, latency_label, display_name, save

        EXPERIMENT = "@EXPERIMENT@"
        REPO = dp.REPO
        FIGURES = dp.figures_dir()  # results/figures/ unless DVFSIM_FIGURES_DIR says otherwise
        RESULTS = dp.results_path(EXPERIMENT)
        RESULTS_DIR = dp.results_dir()
        raw, df = dp.load_results(EXPERIMENT)
    '''.replace("@EXPERIMENT@", experiment))


def notebook(cells):
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


NOTEBOOKS = {}

# ---------------------------------------------------------------------------
NOTEBOOKS["01-table2.ipynb"] = notebook([
    md("""
    # Table 2 — per-kernel vs per-pass DVFS on the RTX 3080 Ti

    Experiment `experiments/table2_3080ti.yaml`: the GPT-3 XL training step
    (captured on an H200) replayed on the RTX 3080 Ti model with free clock
    switches (`switch_latency_us=0`). Policies: `static-best` (one pair for
    the run), `pass-level` (one pair per forward/backward/optimizer pass),
    `kernel-oracle` with the time budget aggregated per kernel (`local`) or
    over the whole run (`global`); objectives `waste` (least energy at no
    slowdown) and `edp` (least energy × delay). Savings and slowdowns are
    against the GPU left alone (`native`). `kernel-oracle` reads the future:
    its numbers are upper bounds.
    """),
    setup("table2_3080ti"),
    code('''
        def config(r):
            agg = r.get("aggregation")
            return r["policy"] + (f" ({agg})" if isinstance(agg, str) and agg and r["policy"] == "kernel-oracle" else "")

        df["config"] = df.apply(config, axis=1)
        # coarse to fine: one pair, one per pass, one per kernel
        configs = ordered(df["config"], ["static-best", "pass-level", "latency-aware", "kernel-predictive",
                                         "kernel-oracle (local)", "kernel-oracle (global)", "kernel-oracle"])
        objectives = ordered(df["objective"], ["waste", "energy", "edp", "ed2p"])
        table = (df.set_index(["config", "objective"])
                   [["energy_saving_pct", "slowdown_pct", "energy_per_iteration_j",
                     "time_per_iteration_s", "clock_switches"]]
                   .unstack("objective").reindex(configs))
        dp.write_table(table, "01-table2")
        device = ", ".join(display_name(d) for d in df["device"].unique())
        print(f"device {device}; baseline {df['baseline_policy'].iloc[0]}: "
              f"{df['baseline_energy_per_iteration_j'].iloc[0]:.2f} J and "
              f"{df['baseline_time_per_iteration_s'].iloc[0]*1e3:.2f} ms per iteration")
        table.round(3)
    '''),
    code('''
        fig, axes = dp.figure("page", 3.0, ncols=2)
        width = 0.8 / max(len(objectives), 1)
        x = np.arange(len(configs))
        oracle = {c: dp.is_oracle(c.split(" (")[0], df) for c in configs}
        ref = dp.REFERENCES["table2_3080ti"]
        for ax, col, label in [(axes[0], "energy_saving_pct", "energy saving vs native (%)"),
                               (axes[1], "slowdown_pct", "slowdown vs native (%)")]:
            for i, obj in enumerate(objectives):
                sub = df[df["objective"] == obj].set_index("config").reindex(configs)
                bars = ax.bar(x + (i - (len(objectives) - 1) / 2) * width, sub[col], width,
                              label=f"objective {obj}", color=dp.PALETTE[i])
                # oracle bars hatched: upper bounds
                for b, c in zip(bars, configs):
                    if oracle[c]: b.set_hatch("///"); b.set_edgecolor("white")
                ax.bar_label(bars, fmt="%.1f", fontsize=7, padding=1)
            ax.set_xticks(x, [c.replace(" (", "\\n(") + ("*" if oracle[c] else "") for c in configs])
            ax.set_ylabel(label)
            ax.axhline(0, color="k", lw=0.8)
            ax.margins(y=0.18)
        # the published values beside dvfsim's (objective waste, no slowdown)
        i_w = objectives.index("waste") if "waste" in objectives else 0
        for kind, marker in [("predicted", "_"), ("measured", "x")]:
            pts = [(configs.index(c), v[kind]) for c, v in ref["energy_saving_pct"].items()
                   if c in configs and kind in v]
            if pts:
                axes[0].scatter([p[0] + (i_w - (len(objectives) - 1) / 2) * width for p in pts],
                                [p[1] for p in pts], marker=marker, s=120 if marker == "_" else 30,
                                color="k", lw=1.5, zorder=5, label=f"{ref['source']}, {kind}")
        from matplotlib.patches import Patch
        handles = [Patch(color=dp.PALETTE[i], label=f"objective {o}") for i, o in enumerate(objectives)]
        handles += [Patch(facecolor="grey", edgecolor="white", hatch="///", label="oracle: upper bound")]
        handles += [h for h in axes[0].get_legend_handles_labels()[0] if not isinstance(h, type(bars))]
        axes[0].legend(handles=[h for h in handles if not h.get_label().startswith("_")], loc="upper left")
        fig.suptitle(f"GPT-3 XL training step on {device}, free clock switches "
                     "(* oracle, hatched: an upper bound)")
        save(fig, "01-table2")
    '''),
    md("""
    **Figure 01-table2.** Energy saving (left) and slowdown (right) per
    iteration against `native` on the RTX 3080 Ti, for each policy
    configuration (x) and objective (colour), with free clock switches;
    black marks: the published values (Spaan et al., Table 2: bar predicted,
    cross measured). Hatched bars (*) are oracles that read the future:
    upper bounds, not achievable online. Under
    `waste` the slowdown stays at or below the allowed 0 %; `edp` trades time
    for energy. `kernel-oracle (global)` may spend the time budget where it
    saves the most energy, so it saves at least as much as `local`, which
    must meet the budget kernel by kernel. The table above (also in
    `figures/01-table2.csv`) has the numbers.
    """),
])

# ---------------------------------------------------------------------------
NOTEBOOKS["02-per-kernel-clocks.ipynb"] = notebook([
    md("""
    # Per-kernel clocks chosen by the kernel oracle on the RTX 3080 Ti

    Experiment `experiments/per_kernel_clocks_3080ti.yaml`: `kernel-oracle`
    (global aggregation, objective `waste`, no slowdown allowed, free
    switches). The run's `kernels.csv` holds, for every kernel launch, the
    clocks the policy requested; here they are grouped per distinct kernel
    (name, class, phase).
    """),
    setup("per_kernel_clocks_3080ti"),
    code('''
        run = df[df["policy"] == "kernel-oracle"].iloc[0]
        kernels = pd.read_csv(RESULTS.parent / run["run_dir"] / "kernels.csv")
        device = display_name(run["device"])
        print(f"{device}: energy saving {run['energy_saving_pct']:.2f} %, slowdown {run['slowdown_pct']:.3f} %, "
              f"{int(run['clock_switches'])} clock switches, {len(kernels)} kernel launches")

        kernels["pair"] = (kernels["requested_core_mhz"].astype(int).astype(str) + "/" +
                           kernels["requested_memory_mhz"].astype(int).astype(str))
        def mode(s):
            return s.value_counts().index[0]
        g = kernels.groupby(["name", "class", "phase"], sort=False)
        per = pd.DataFrame({
            "launches": g.size(),
            "core_mhz": g["requested_core_mhz"].agg(mode),
            "memory_mhz": g["requested_memory_mhz"].agg(mode),
            "distinct_pairs": g["pair"].nunique(),
            "baseline_time_ms": g["baseline_duration_ns"].sum() / 1e6,
            "time_ms": g["duration_ns"].sum() / 1e6,
            "baseline_energy_j": g["baseline_energy_j"].sum(),
            "energy_j": g["energy_j"].sum(),
        }).reset_index()
        per["time_change_pct"] = 100 * (per["time_ms"] / per["baseline_time_ms"] - 1)
        per["energy_saving_pct"] = 100 * (1 - per["energy_j"] / per["baseline_energy_j"])
        per["share_of_time_pct"] = 100 * per["baseline_time_ms"] / per["baseline_time_ms"].sum()
        per = per.sort_values("baseline_time_ms", ascending=False).reset_index(drop=True)
        dp.write_table(per, "02-per-kernel-clocks", index=False)
        short = per.copy()
        short["name"] = short["name"].str.slice(0, 60)
        print(f"{len(per)} distinct kernels; the 25 that take the most time:")
        short.head(25).round(2)
    '''),
    code('''
        classes = (per.groupby("class")["baseline_time_ms"].sum().sort_values(ascending=False).index.tolist())
        fig, axes = dp.figure("page", 3.3, ncols=2, gridspec_kw={"width_ratios": [1.4, 1]})
        ax = axes[0]
        mems = sorted(per["memory_mhz"].unique())
        cmap = plt.get_cmap("cividis", max(len(mems), 2))  # colour-blind safe, monotone lightness
        rng = np.random.default_rng(0)
        for i, cls in enumerate(classes):
            sub = per[per["class"] == cls]
            xs = i + rng.uniform(-0.28, 0.28, len(sub))
            ax.scatter(xs, sub["core_mhz"], s=8 + 400 * sub["share_of_time_pct"] / per["share_of_time_pct"].max(),
                       c=[cmap(mems.index(m)) for m in sub["memory_mhz"]], alpha=0.7, edgecolors="k", linewidths=0.3)
        ax.set_xticks(range(len(classes)), classes, rotation=30, ha="right")
        ax.set_ylabel("chosen core clock (MHz)")
        ax.set_xlabel("kernel class (marker area ∝ share of GPU time)")
        for j, m in enumerate(mems):
            ax.scatter([], [], color=cmap(j), label=f"memory {m} MHz")
        ax.legend(loc="lower right")
        ax.set_title("(a) one marker per distinct kernel")

        ax = axes[1]
        phases = ordered(per["phase"], ["forward", "backward", "optimizer", "other"])
        bins = np.linspace(per["core_mhz"].min() - 50, per["core_mhz"].max() + 50, 25)
        ax.hist([per.loc[per["phase"] == p, "core_mhz"] for p in phases], bins=bins, stacked=True,
                weights=[per.loc[per["phase"] == p, "share_of_time_pct"] for p in phases], label=phases,
                color=dp.PALETTE[:len(phases)])
        ax.set_xlabel("chosen core clock (MHz)")
        ax.set_ylabel("share of baseline GPU time (%)")
        ax.legend()
        ax.set_title("(b) time-weighted, by phase")
        fig.suptitle(f"kernel-oracle (an upper bound; global, waste, 0 % slowdown) on {device}: "
                     "clocks per distinct kernel")
        save(fig, "02-per-kernel-clocks")
    '''),
    md("""
    **Figure 02-per-kernel-clocks.** (a) The core clock that the kernel
    oracle chooses for each distinct kernel (one marker per name, class and
    phase; the most frequent choice when launches differ), grouped by kernel
    class, marker area proportional to the kernel's share of the baseline GPU
    time, colour the memory clock. (b) The same choices weighted by GPU time,
    stacked by training phase. Memory-bound kernels (elementwise, norm,
    optimizer) tolerate low core clocks at no slowdown; GEMMs and attention
    stay high. The full table is `figures/02-per-kernel-clocks.csv`.
    """),
])

# ---------------------------------------------------------------------------
NOTEBOOKS["03-switch-latency.ipynb"] = notebook([
    md("""
    # How much of the saving survives the clock-switch latency

    Experiment `experiments/switch_latency.yaml`: every clock switch takes
    `switch_latency_us` (1 µs to 200 ms); the old clocks hold until the
    switch lands (docs/design.md, semantics 5). Policies use objective `waste`
    with no slowdown allowed; savings and slowdowns are against `native`.
    """),
    setup("switch_latency"),
    code('''
        devices = list(dict.fromkeys(df["device"]))  # experiment order
        df = df.sort_values("switch_latency_us", kind="stable")
        policies = ordered(df["policy"])
        CLIP_SAVING_PCT = -20  # lower limit of the saving axis when a policy loses more
        PER_KERNEL = [p for p in ["kernel-oracle", "kernel-predictive"] if p in policies]
        ORACLE = "latency-oracle"  # the envelope: the best plan at each latency

        def sourced_latency_us(device):
            """The device file's median core switch latency (models/devices/NAME.yaml) and its source kind."""
            import re
            path = REPO / "models" / "devices" / f"{device}.yaml"
            if not path.exists(): return np.nan, ""
            text = path.read_text()
            core = re.search(r"switch_latency:\\s*\\n\\s*core:\\s*\\{([^}]*)\\}", text)
            if not core: return np.nan, ""
            m = re.search(r"(?:median_us|value_us):\\s*([0-9.eE+-]+)", core.group(1))
            src = re.search(r'source:\\s*"(\\w+)', core.group(1))
            return (float(m.group(1)) if m else np.nan), (src.group(1) if src else "")

        PAYS_PP = 0.05  # "pays": saves more than the reference by this many percentage points

        def crossover(sub):
            """Break-even latency: the smallest latency from which the best per-kernel policy
            never again saves more than the single best static pair (or than nothing, when
            static-best is absent or loses energy). NaN: it pays over the whole range."""
            if not PER_KERNEL: return np.nan
            best = sub[sub["policy"].isin(PER_KERNEL)].groupby("switch_latency_us")["energy_saving_pct"].max()
            ref = (sub[sub["policy"] == "static-best"].set_index("switch_latency_us")["energy_saving_pct"]
                   .reindex(best.index).fillna(0.0) if "static-best" in policies
                   else pd.Series(0.0, index=best.index)).clip(lower=0.0)
            pays = best > ref + PAYS_PP
            if not pays.any(): return best.index.min()  # never pays, not even at the lowest latency
            last = pays[pays].index.max()
            later = best.index[best.index > last]
            return later.min() if len(later) else np.nan

        rows = []
        for d in devices:
            sub = df[df["device"] == d]
            lo, hi = sub["switch_latency_us"].min(), sub["switch_latency_us"].max()
            r = {"device": d, "per_kernel_stops_paying_us": crossover(sub)}
            for p in policies:
                s = sub[sub["policy"] == p].set_index("switch_latency_us")["energy_saving_pct"]
                r[f"{p} saving @{latency_label(lo)} (%)"] = s.get(lo, np.nan)
                r[f"{p} saving @{latency_label(hi)} (%)"] = s.get(hi, np.nan)
            rows.append(r)
        summary = pd.DataFrame(rows).set_index("device")
        dp.write_table(summary, "03-switch-latency")
        summary.T.round(2)
    '''),
    code('''
        fig, axes = dp.figure("page", 4.6, nrows=2, ncols=len(devices), sharex=True, squeeze=False)
        for j, d in enumerate(devices):
            sub = df[df["device"] == d]
            top, bottom = axes[0, j], axes[1, j]
            for p in policies:
                s = sub[sub["policy"] == p]
                if p == ORACLE:
                    # The envelope every other curve is read against.
                    kw = dict(color="k", ls="--", marker=".", lw=1.2, label=f"{p} (envelope, upper bound)")
                    top.fill_between(s["switch_latency_us"], 0, s["energy_saving_pct"].clip(lower=0),
                                     color="grey", alpha=0.15, lw=0)
                else:
                    kw = dp.policy_style(p, df)
                top.plot(s["switch_latency_us"], s["energy_saving_pct"], **kw)
                bottom.plot(s["switch_latency_us"], s["slowdown_pct"], **kw)
            # The device's own switch latency (its device file, with the kind of source).
            lat, kind = sourced_latency_us(d)
            if np.isfinite(lat):
                for ax in (top, bottom):
                    ax.axvline(lat, color=dp.OKABE_ITO["vermillion"], ls="-.", lw=1.0, alpha=0.8)
                late = lat > np.sqrt(sub["switch_latency_us"].min() * sub["switch_latency_us"].max())
                top.annotate(f"core switch\\n{latency_label(lat)} ({kind})", (lat, 0.2),
                             xycoords=("data", "axes fraction"), fontsize=7, color=dp.OKABE_ITO["vermillion"],
                             ha="right" if late else "left", xytext=(-3 if late else 3, 0),
                             textcoords="offset points")
            # Keep the positive savings readable: clip very negative ones (and say so).
            low = sub["energy_saving_pct"].min()
            if low < CLIP_SAVING_PCT:
                top.set_ylim(bottom=CLIP_SAVING_PCT)
                top.text(0.02, 0.03, f"clipped at {CLIP_SAVING_PCT:g} % (lowest {low:.0f} %)",
                         transform=top.transAxes, fontsize=7, color="dimgrey")
            # The break-even latency on every panel (or where it lies outside the range).
            cross = summary.loc[d, "per_kernel_stops_paying_us"]
            lo, hi = sub["switch_latency_us"].min(), sub["switch_latency_us"].max()
            if np.isfinite(cross):
                for ax in (top, bottom):
                    ax.axvline(cross, color="dimgrey", ls=":", lw=1.2)
                text = (f"break-even: per-kernel\\nDVFS never pays" if cross <= lo else
                        f"break-even: per-kernel\\nDVFS stops paying\\n≥ {latency_label(cross)}")
            else:
                text = f"no break-even: per-kernel\\nDVFS pays up to\\n{latency_label(hi)}"
            right = np.isfinite(cross) and cross > np.sqrt(lo * hi)
            top.annotate(text, (cross if np.isfinite(cross) else hi, 0.97),
                         xycoords=("data", "axes fraction"), fontsize=7, color="dimgrey", va="top",
                         ha="right" if right or not np.isfinite(cross) else "left",
                         xytext=(-3 if right or not np.isfinite(cross) else 3, 0), textcoords="offset points")
            if "latency-aware" in policies:
                la = sub[sub["policy"] == "latency-aware"].sort_values("switch_latency_us")
                if len(la):
                    last = la.iloc[-1]
                    top.annotate(f"{last['energy_saving_pct']:.1f} %", (last["switch_latency_us"], last["energy_saving_pct"]),
                                 fontsize=7, color=COLORS["latency-aware"], xytext=(-4, 6),
                                 textcoords="offset points", ha="right")
            for ax in (top, bottom):
                ax.set_xscale("log")
                ax.axhline(0, color="k", lw=0.6)
                ax.xaxis.set_major_formatter(FuncFormatter(latency_label))
                ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(base=100))
            if sub["slowdown_pct"].max() > 50:
                bottom.set_yscale("symlog", linthresh=10)
                bottom.set_ylim(bottom=min(-1.0, 1.2 * sub["slowdown_pct"].min()))
            top.set_title(display_name(d))
            bottom.set_xlabel("clock-switch latency")
        axes[0, 0].set_ylabel("energy saving vs native (%)")
        axes[1, 0].set_ylabel("slowdown vs native (%)")
        handles, labels = axes[0, 0].get_legend_handles_labels()
        fig.get_layout_engine().set(rect=(0, 0.09, 1, 0.91))  # room for the legend below
        fig.legend(handles, labels, loc="lower center", ncol=3)
        fig.suptitle("GPT-3 XL training step: saving and slowdown vs clock-switch latency (objective waste, 0 % budget)")
        save(fig, "03-switch-latency")
    '''),
    md("""
    **Figure 03-switch-latency.** Top row: energy saving per iteration
    against `native` as the clock-switch latency grows (log scale, 1 µs to
    200 ms), one panel per GPU, one line per policy. Bottom row: the slowdown
    that comes with it (symmetric-log scale when it grows large). The dotted
    line (on every panel) marks where per-kernel DVFS (the better of
    `kernel-oracle` and `kernel-predictive`) stops paying: from that latency
    on it never again saves more than the single best static pair (by more
    than 0.05 percentage points; a static pair that loses energy counts as
    0). Dashed lines are oracles (they read the future): upper bounds. The
    dashed black line and grey area are `latency-oracle`, the envelope: the
    best plan at that latency with full knowledge of the run (segments that
    amortise a switch, switches issued early, never below the per-kernel,
    per-phase and single-pair plans it also replays); every other curve is
    read against it. The dash-dotted line is the device's own median
    core-switch latency from its device file, with the kind of source
    ("read" from a publication, or an "assumption"). `latency-aware` is the
    online counterpart of the envelope (it learns the first of the trace's
    two steps, so it can recover at most about half of it). `latency-aware` groups kernels into
    segments long enough to amortise the latency, so it follows the
    per-kernel policies while switches are cheap and keeps the per-pass
    saving (labelled at the largest latency) when they are not. The table
    above (`figures/03-switch-latency.csv`) gives the numbers at the ends of
    the range.
    """),
])

# ---------------------------------------------------------------------------
NOTEBOOKS["04-pareto.ipynb"] = notebook([
    md("""
    # Energy saving vs allowed slowdown on the RTX 3080 Ti

    Experiment `experiments/pareto_3080ti.yaml`: objective `waste` with the
    allowed slowdown `max_slowdown` from 0 to 30 %, free clock switches.
    """),
    setup("pareto_3080ti"),
    code('''
        df = df.sort_values("max_slowdown")
        policies = ordered(df["policy"])
        device = ", ".join(display_name(d) for d in df["device"].unique())
        table = df.pivot_table(index="max_slowdown", columns="policy",
                               values=["energy_saving_pct", "slowdown_pct"])
        dp.write_table(table, "04-pareto")
        table.round(2)
    '''),
    code('''
        fig, axes = dp.figure("page", 3.0, ncols=2)
        ax = axes[0]
        for p in policies:
            s = df[df["policy"] == p]
            ax.plot(s["slowdown_pct"], s["energy_saving_pct"], **dp.policy_style(p, df))
        last = df[df["policy"] == policies[0]]
        for _, r in last.iterrows():
            ax.annotate(f"{r['max_slowdown']:g}", (r["slowdown_pct"], r["energy_saving_pct"]),
                        fontsize=7, xytext=(3, -8), textcoords="offset points", color=COLORS.get(policies[0]))
        ax.set_xlabel("slowdown vs native (%)")
        ax.set_ylabel("energy saving vs native (%)")
        ax.set_title(f"(a) trade-off (labels: allowed slowdown %, {policies[0]})")
        ax.legend()
        ax = axes[1]
        for p in policies:
            s = df[df["policy"] == p]
            ax.plot(s["max_slowdown"], s["slowdown_pct"], **dp.policy_style(p, df))
        lim = df["max_slowdown"].max()
        ax.plot([0, lim], [0, lim], color="k", ls=":", lw=0.8, label="budget")
        ax.set_xlabel("allowed slowdown, max_slowdown (%)")
        ax.set_ylabel("achieved slowdown vs native (%)")
        ax.set_title("(b) the slowdown stays within the budget")
        ax.legend()
        fig.suptitle(f"GPT-3 XL training step on {device}: objective waste, free clock switches")
        save(fig, "04-pareto")
    '''),
    md("""
    **Figure 04-pareto.** (a) Energy saving against achieved slowdown, both
    per iteration and against `native`, as the allowed slowdown grows from 0
    to 30 % (points labelled with the budget for the first policy); higher
    and further left is better. (b) The achieved slowdown against the allowed
    one: points on or under the dotted line respect the budget. Dashed lines
    are oracles (they read the future): upper bounds. The numbers are in
    `figures/04-pareto.csv`.
    """),
])

# ---------------------------------------------------------------------------
NOTEBOOKS["05-validation.ipynb"] = notebook([
    md("""
    # Predicted vs measured on the H200, every workload class

    Experiment `experiments/validation_h200.yaml`: each H200 capture (the
    shipped trace, the GPT-3 captures of `validation/h200/` and one capture
    per workload class in `validation/h200/classes/`) replayed on the H200
    model under `native` (the GPU left to its firmware, as it ran during the
    measurement), twice: `host_overhead=off` (the traced host timeline as
    traced: *raw*) and `auto` (the profiler host-overhead correction, factor
    2.06, docs/validation.md: *corrected*). Measured values come from the NVML
    energy window stored next to each trace (`<trace>.measured.json`).
    """),
    setup("validation_h200"),
    code('''
        def measured_for(trace):
            p = REPO / trace
            name = p.name
            for suffix in (".kineto.json.gz", ".kineto.json", ".json.gz", ".json", ".sqlite", ".gz"):
                if name.endswith(suffix):
                    name = name[: -len(suffix)]
                    break
            m = p.with_name(name + ".measured.json")
            if not m.exists():
                return None
            j = json.loads(m.read_text())
            w = (j.get("steps") or [{}])[0]
            e = j.get("energy_per_step_j") or (w["energy_mJ"] / 1e3 / w["steps"] if w else np.nan)
            t = j.get("time_per_step_s") or (w["dt_s"] / w["steps"] if w else np.nan)
            return {"measured_energy_per_iteration_j": e, "measured_time_per_iteration_s": t,
                    "measured_power_w": e / t, "class": j.get("class") or "gpt3",
                    "date": j.get("date_utc", ""), "measured_file": str(m.relative_to(REPO))}

        rows = []
        for _, r in df.iterrows():
            m = measured_for(r["trace"])
            if m is None:
                print("no measurement for", r["trace"])
                continue
            label = r["trace_name"] + (" (classes)" if "/classes/" in r["trace"] else "")
            corrected = "host_overhead=off" not in r["run_id"]
            rows.append({"trace": label, "path": r["trace"], "corrected": corrected,
                         "predicted_energy_per_iteration_j": r["energy_per_iteration_j"],
                         "predicted_time_per_iteration_s": r["time_per_iteration_s"],
                         "predicted_power_w": r["energy_per_iteration_j"] / r["time_per_iteration_s"], **m})
        v = pd.DataFrame(rows)
        for q in ("energy_per_iteration_j", "time_per_iteration_s", "power_w"):
            v[f"{q}_error_pct"] = 100 * (v[f"predicted_{q}"] / v[f"measured_{q}"] - 1)
        v = v.sort_values(["corrected", "class", "trace"]).reset_index(drop=True)
        dp.write_table(v.drop(columns=["path"]), "05-validation", index=False)
        c = v[v["corrected"]]
        print("corrected: worst |error| energy {:.1f} %, time {:.1f} %; mean |error| energy {:.1f} %, time {:.1f} %".format(
            c["energy_per_iteration_j_error_pct"].abs().max(), c["time_per_iteration_s_error_pct"].abs().max(),
            c["energy_per_iteration_j_error_pct"].abs().mean(), c["time_per_iteration_s_error_pct"].abs().mean()))
        v.drop(columns=["measured_file", "path"]).round(3)
    '''),
    code('''
        fig = plt.figure(figsize=(dp.PAGE_IN, 7.0))
        grid = fig.add_gridspec(2, 3, height_ratios=[1, 1.15], width_ratios=[1, 1, 0.55])
        axes = [fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1]), fig.add_subplot(grid[1, :])]
        legend_ax = fig.add_subplot(grid[0, 2]); legend_ax.axis("off")
        traces = list(dict.fromkeys(v.loc[v["corrected"], "trace"]))
        classes = list(dict.fromkeys(v["class"]))
        colors = dict(zip(classes, dp.PALETTE * 3))
        markers = dict(zip(classes, "osD^v<>Ph*X" * 2))
        for ax, q, scale, unit in [(axes[0], "energy_per_iteration_j", 1, "J"),
                                   (axes[1], "time_per_iteration_s", 1e3, "ms")]:
            lo = 0.8 * scale * min(v[f"measured_{q}"].min(), v[f"predicted_{q}"].min())
            hi = 1.25 * scale * max(v[f"measured_{q}"].max(), v[f"predicted_{q}"].max())
            xs = np.geomspace(lo, hi, 50)
            ax.fill_between(xs, 0.9 * xs, 1.1 * xs, color="grey", alpha=0.15, label="±10 %")
            ax.plot(xs, xs, color="k", lw=0.8, ls="--")
            for _, r in v.iterrows():
                ax.scatter(scale * r[f"measured_{q}"], scale * r[f"predicted_{q}"], s=14, zorder=3,
                           edgecolors=colors[r["class"]], marker=markers[r["class"]],
                           facecolors=colors[r["class"]] if r["corrected"] else "none", linewidths=0.8)
            ax.set_xscale("log"); ax.set_yscale("log"); ax.set_xlim(lo, hi); ax.set_ylim(lo, hi)
            what = "energy / iteration" if q.startswith("energy") else "time / iteration"
            ax.set_xlabel(f"measured {what} ({unit})")
            ax.set_ylabel(f"predicted {what} ({unit})")
        for k in classes:
            legend_ax.scatter([], [], color=colors[k], marker=markers[k], s=14, label=k)
        legend_ax.scatter([], [], facecolors="none", edgecolors="k", marker="o", s=14, label="open: raw")
        legend_ax.fill_between([], [], color="grey", alpha=0.15, label="±10 %")
        legend_ax.legend(loc="center left", title="workload class\\n(filled: corrected)")
        ax = axes[2]
        c = v[v["corrected"]].set_index("trace").loc[traces]
        raw = v[~v["corrected"]].set_index("trace").loc[traces]
        x = np.arange(len(traces))
        for i, (q, label) in enumerate([("energy_per_iteration_j", "energy"), ("time_per_iteration_s", "time")]):
            bars = ax.bar(x + (i - 0.5) * 0.38, c[f"{q}_error_pct"], 0.38, label=f"{label} (corrected)",
                          color=dp.PALETTE[i])
            ax.bar_label(bars, fmt="%.0f", fontsize=7, padding=1)
            ax.scatter(x + (i - 0.5) * 0.38, raw[f"{q}_error_pct"].clip(-60, 60), marker="x", s=14,
                       color="k", zorder=4, label="raw" if i == 0 else None)
        ax.set_xticks(x, [f"{t} [{k}]" for t, k in zip(traces, c["class"])], rotation=60, ha="right",
                      rotation_mode="anchor")
        ax.axhline(0, color="k", lw=0.8)
        for y in (-5, 5):
            ax.axhline(y, color="grey", lw=0.6, ls=":")
        ax.set_ylim(-62, 62)
        ax.set_ylabel("error vs measured (%)\\n(raw clipped at ±60)")
        ax.legend(ncol=3, loc="upper left")
        fig.suptitle(f"{display_name('h200')}, native: predicted (dvfsim) vs measured (NVML) per iteration")
        save(fig, "05-validation")
    '''),
    md("""
    **Figure 05-validation.** Top: predicted against measured energy and
    time per iteration on the H200 for every capture (log axes; dashed:
    perfect agreement; band: ±10 %; marker and colour: workload class;
    filled: with the profiler host-overhead correction, open: raw). Bottom:
    the relative error of
    energy and time per capture (bars: corrected; crosses: raw, clipped at
    ±60 %), with the workload class in brackets. Measured values are NVML
    energy-counter windows of unprofiled steps; the replay uses the two
    profiled steps of each trace. The launch-bound captures (small-batch
    training, KV-cache decode, MoE) are those the correction moves; the
    large remaining misses are the fp32 / tf32 encoder (power of SIMT and tf32
    GEMMs under-predicted) and ResNet-50 (−7 % energy); see
    docs/validation.md. The table is `figures/05-validation.csv`.
    """),
])

# ---------------------------------------------------------------------------
NOTEBOOKS["06-frequency-response.ipynb"] = notebook([
    md("""
    # Frequency response against the public Kernel Tuner sweeps

    Experiments `experiments/kerneltuner_a100pcie40.yaml` and
    `kerneltuner_rtxa4000.yaml`: the one-kernel native trace of each sweep
    (`models/calibration/kerneltuner/`) replayed under `static` at every clock
    the sweep requested, on `a100-pcie-40gb` and `rtx-a4000`. Measured points
    are the sweep CSVs (NVML board power, mean time of 10 runs). The A4000's
    two highest requests are held at its 140 W cap; the plot puts them at the
    requested clock and labels the clock the card (and the model) ran.
    """),
    setup("kerneltuner_a100pcie40"),
    code('''
        SWEEPS = [("kerneltuner_a100pcie40", "A100 PCIe 40 GB", "kerneltuner-a100pcie40-fp32-freqsweep.csv", "gr_clock_MHz"),
                  ("kerneltuner_rtxa4000", "RTX A4000", "kerneltuner-rtxa4000-fp32-freqsweep.csv", "requested_MHz")]
        def measured(csv, col):
            m = pd.read_csv(REPO / "models/calibration/kerneltuner" / csv, comment="#")
            return m.rename(columns={col: "requested"})
        def modelled(exp):
            path = pathlib.Path(os.environ.get(exp.upper() + "_RESULTS") or RESULTS_DIR / exp / "results.csv")
            r = pd.read_csv(path)
            r = r[r["status"] == "ok"].copy()
            r["requested"] = r["core_mhz"].astype(int)
            r["time_ms"] = r["time_s"] * 1e3
            return r.sort_values("requested")
        rows = []
        fig, axes = dp.figure("page", 4.8, nrows=2, ncols=3)
        for row, (exp, label, csv, col) in enumerate(SWEEPS):
            m, r = measured(csv, col), modelled(exp)
            j = m.merge(r[["requested", "time_ms", "avg_power_w", "energy_j"]], on="requested")
            for q_m, q_r, ax, unit in [("nvml_power_W", "avg_power_w", axes[row, 0], "power (W)"),
                                        ("time_ms", "time_ms", axes[row, 1], "time per launch (ms)"),
                                        ("energy_J_per_run", "energy_j", axes[row, 2], "energy per launch (J)")]:
                mq = q_m if q_m != "time_ms" else "time_ms_x"
                y_m = j[q_m + ("_x" if q_m == "time_ms" else "")] if q_m == "time_ms" else j[q_m]
                y_r = j["time_ms_y"] if q_r == "time_ms" else j[q_r]
                ax.plot(j["requested"], y_m, "o", color="k", label="measured (Kernel Tuner, NVML)")
                ax.plot(j["requested"], y_r, "-", color=dp.OKABE_ITO["vermillion"], label="dvfsim model")
                ax.set_xlabel("requested core clock (MHz)")
                ax.set_ylabel(unit)
                ax.set_title(f"{label}: {unit.split(' (')[0]}".replace(" per launch", ""))
            e_m = j.loc[j["energy_J_per_run"].idxmin()]
            e_r = j.loc[j["energy_j"].idxmin()]
            axes[row, 2].plot(e_m["requested"], e_m["energy_J_per_run"], "*", ms=14, color="k", mfc="none")
            axes[row, 2].plot(e_r["requested"], e_r["energy_j"], "*", ms=10, color=dp.OKABE_ITO["vermillion"])
            axes[row, 2].annotate(f"least energy: measured {e_m['requested']:.0f} MHz,\\nmodel {e_r['requested']:.0f} MHz",
                                  (0.25, 0.82), xycoords="axes fraction", fontsize=7)
            held = j[(j["core_freq_MHz"] - j["requested"]).abs() > 1]
            if len(held):
                text = "; ".join(f"{c['requested']:.0f} -> {c['core_freq_MHz']:.0f}" for _, c in held.iterrows())
                axes[row, 0].annotate(f"held at the cap (MHz):\\n{text}", (0.35, 0.55), xycoords="axes fraction", fontsize=7)
            for _, x in j.iterrows():
                rows.append({"gpu": label, "requested_mhz": x["requested"], "observed_mhz": x["core_freq_MHz"],
                             "measured_power_w": x["nvml_power_W"], "model_power_w": x["avg_power_w"],
                             "power_error_pct": 100 * (x["avg_power_w"] / x["nvml_power_W"] - 1),
                             "measured_time_ms": x["time_ms_x"], "model_time_ms": x["time_ms_y"],
                             "time_error_pct": 100 * (x["time_ms_y"] / x["time_ms_x"] - 1),
                             "measured_energy_j": x["energy_J_per_run"], "model_energy_j": x["energy_j"]})
        axes[0, 0].legend(loc="upper left", fontsize=7)
        save(fig, "06-frequency-response")
        t = pd.DataFrame(rows)
        dp.write_table(t, "06-frequency-response", index=False)
        print(t.groupby("gpu")[["power_error_pct", "time_error_pct"]].agg(lambda v: v.abs().max()).round(2))
        t.round(2)
    '''),
])

# ---------------------------------------------------------------------------
NOTEBOOKS["07-power-limit.ipynb"] = notebook([
    md("""
    # Power limit against locked clocks

    Experiments `experiments/power_limit_<device>.yaml`: the shipped GPT-3-XL
    training step on each device, left to its firmware (`native`) at every
    allowed board power limit (25 W steps), and under `static` at every
    supported core clock (default memory clock). Left: time and energy per
    iteration against the power limit; right: against the locked core clock.
    Stars mark the least energy; the diamond the Zeus-style `power-limit`
    policy's choice at eta = 0.5.
    """),
    setup("power_limit_h200"),
    code('''
        DEVICES = ["a100-pcie", "a100-sxm", "h100-sxm", "h200"]
        fig, axes = dp.figure("page", 2.2 * len(DEVICES), nrows=len(DEVICES), ncols=2)
        BLUE, ORANGE, GREEN = dp.OKABE_ITO["blue"], dp.OKABE_ITO["orange"], dp.OKABE_ITO["green"]
        rows = []
        for i, d in enumerate(DEVICES):
            exp = f"power_limit_{d}"
            path = pathlib.Path(os.environ.get(exp.upper().replace("-", "_") + "_RESULTS") or RESULTS_DIR / exp / "results.csv")
            r = pd.read_csv(path)
            r = r[r["status"] == "ok"]
            n = r[r["policy"] == "native"].sort_values("power_limit_w")
            s = r[r["policy"] == "static"].sort_values("core_mhz")
            z = r[(r["policy"] == "power-limit") & (r["eta"] == 0.5)]
            for ax, x, df, xl in [(axes[i, 0], "power_limit_w", n, "board power limit (W)"),
                                  (axes[i, 1], "core_mhz", s, "locked core clock (MHz)")]:
                ax.plot(df[x], df["energy_per_iteration_j"], "-", color=BLUE)
                ax.set_ylabel("energy / iteration (J)", color=BLUE)
                b = df.loc[df["energy_per_iteration_j"].idxmin()]
                ax.plot(b[x], b["energy_per_iteration_j"], "*", ms=12, color=BLUE)
                right = b[x] > (df[x].min() + df[x].max()) / 2
                ax.annotate(f"least energy {b['energy_per_iteration_j']:.1f} J at {b[x]:.0f}", (b[x], b["energy_per_iteration_j"]),
                            textcoords="offset points", xytext=(-5 if right else 5, 8), fontsize=7,
                            ha="right" if right else "left")
                tx = ax.twinx()
                tx.plot(df[x], 1e3 * df["time_per_iteration_s"], "--", color=ORANGE)
                tx.set_ylabel("time / iteration (ms)", color=ORANGE)
                tx.grid(False)
                ax.set_xlabel(xl)
                ax.set_title(display_name(d))
                rows.append({"device": d, "knob": x, "best": b[x], "energy_j": b["energy_per_iteration_j"],
                             "time_ms": 1e3 * b["time_per_iteration_s"]})
            if len(z):
                zz = z.iloc[0]
                axes[i, 0].plot(zz["power_limit_w"], zz["energy_per_iteration_j"], "D", color=GREEN, ms=7)
                axes[i, 0].text(0.5, 0.97, f"◆ power-limit policy (eta 0.5): {zz['power_limit_w']:.0f} W",
                                transform=axes[i, 0].transAxes, ha="center", va="top", fontsize=7, color=GREEN)
        save(fig, "07-power-limit")
        t = pd.DataFrame(rows)
        dp.write_table(t, "07-power-limit", index=False)
        t.round(2)
    '''),
])


# ---------------------------------------------------------------------------
NOTEBOOKS["08-seed-spread.ipynb"] = notebook([
    md("""
    # Spread across seeds of the random switch latencies

    Experiment `experiments/seed_spread.yaml`: the shipped GPT-3-XL training
    step on each device at its own clock-switch latency distribution
    (`switch_latency` in the device file: lognormal median, spread and
    bounds; no override), one run per seed. Each seed draws other switch
    latencies, so a policy that switches sees other delays, plans other
    segments and lands at another saving. Bars: the mean over the seeds;
    whiskers: min..max; dots: each seed. The table gives the standard
    deviation and the worst slowdown over the seeds (a budget can be missed
    on some seeds only).
    """),
    setup("seed_spread"),
    code('''
        budgets = sorted(df["max_slowdown"].unique())
        devices = list(dict.fromkeys(df["device"]))
        policies = ordered(df["policy"])
        fig, axes = dp.figure("page", 2.6, ncols=len(budgets), squeeze=False)
        rows = []
        width = 0.8 / max(1, len(policies))
        for ax, b in zip(axes[0], budgets):
            sub = df[df["max_slowdown"] == b]
            for j, p in enumerate(policies):
                for i, d in enumerate(devices):
                    r = sub[(sub["device"] == d) & (sub["policy"] == p)]
                    if not len(r):
                        continue
                    x = i + (j - (len(policies) - 1) / 2) * width
                    s = r["energy_saving_pct"]
                    ax.bar(x, s.mean(), width * 0.9, color=COLORS.get(p), alpha=0.35,
                           label=dp.policy_label(p, df) if i == 0 else None)
                    ax.errorbar(x, s.mean(), yerr=[[s.mean() - s.min()], [s.max() - s.mean()]],
                                fmt="none", ecolor="black", capsize=2, lw=0.6)
                    ax.plot([x] * len(s), s, ".", color=COLORS.get(p), ms=3)
                    rows.append({"max_slowdown_pct": b, "device": d, "policy": p, "seeds": len(s),
                                 "saving_mean_pct": s.mean(), "saving_min_pct": s.min(),
                                 "saving_max_pct": s.max(),
                                 "saving_std_pct": s.std(ddof=1) if len(s) > 1 else 0.0,
                                 "slowdown_max_pct": r["slowdown_pct"].max(),
                                 "switches_mean": r["clock_switches"].mean()})
            ax.set_xticks(range(len(devices)))
            ax.set_xticklabels([display_name(d).replace(" ", "\\n", 1) for d in devices])
            ax.axhline(0, color="black", lw=0.6)
            ax.set_title(f"max_slowdown {b:g} %, {df['seed'].nunique()} seeds")
            ax.set_ylabel("energy saving vs native (%)")
        axes[0][0].legend(loc="upper left")
        save(fig, "08-seed-spread")
        t = pd.DataFrame(rows)
        dp.write_table(t, "08-seed-spread", index=False)
        t.round(3)
    '''),
])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 when a notebook differs from this file's cells")
    args = ap.parse_args()
    stale = []
    for name, nb in NOTEBOOKS.items():
        for i, cell in enumerate(nb["cells"]):
            cell["id"] = f"{name.split('-')[0]}-{i:02d}"
        text = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
        path = HERE / name
        if args.check:
            if not path.is_file() or path.read_text() != text:
                stale.append(name)
            continue
        path.write_text(text)
        print("wrote", path)
    if stale:
        print("make_notebooks.py --check: out of date: " + ", ".join(stale) +
              "; run /usr/bin/python3 notebooks/make_notebooks.py and commit the notebooks",
              file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
