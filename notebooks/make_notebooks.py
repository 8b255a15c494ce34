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
        kernels = dp.read_kernels(RESULTS.parent / run["run_dir"])  # kernels.csv, names joined from names.csv
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
        for col in ["energy_saving_pct", "slowdown_pct"]:  # float noise of equal runs (1e-13) is 0
            df[col] = df[col].where(df[col].abs() > 1e-9, 0.0)
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
    shipped trace, the GPT-3 captures of `validation/h200/`, one capture
    per workload class in `validation/h200/classes/`, the single-GPU
    microbatch step of `validation/h200/pipeline/` and the held-out workloads
    of `validation/h200/heldout/`) replayed on the H200
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
            label = r["trace_name"] + (" (classes)" if "/classes/" in r["trace"]
                                       else " (held out)" if "/heldout/" in r["trace"]
                                       else " (held out 2)" if "/heldout2/" in r["trace"]
                                       else " (held out 3)" if "/heldout3/" in r["trace"]
                                       else " (held out 4)" if "/heldout4/" in r["trace"]
                                       else " (held out 5)" if "/heldout5/" in r["trace"]
                                       else " (held out 6)" if "/heldout6/" in r["trace"]
                                       else " (held out 7)" if "/heldout7/" in r["trace"]
                                       else " (board 12-06)" if "/ops/call12/" in r["trace"]
                                       else " (warm-up)" if "/capwarmup/" in r["trace"]
                                       else " (5 steps)" if "/firststep/" in r["trace"]
                                       else " (lease 12-04)" if "/timing/" in r["trace"] else "")
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
        fig = plt.figure(figsize=(dp.PAGE_IN, 13.5))
        # Two subfigures, so that the long capture names below do not narrow the scatters above.
        top, bottom = fig.subfigures(2, 1, height_ratios=[1.3, 3.2])
        grid = top.add_gridspec(1, 3, width_ratios=[1, 1, 0.9])
        axes = [top.add_subplot(grid[0, 0]), top.add_subplot(grid[0, 1]), bottom.add_subplot(1, 1, 1)]
        legend_ax = top.add_subplot(grid[0, 2]); legend_ax.axis("off")
        traces = list(dict.fromkeys(v.loc[v["corrected"], "trace"]))
        classes = list(dict.fromkeys(v["class"]))
        # one colour and marker per class, however many classes the captures add
        colors = {k: dp.PALETTE[i % len(dp.PALETTE)] for i, k in enumerate(classes)}
        markers = {k: "osD^v<>Ph*X"[i % 11] for i, k in enumerate(classes)}
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
        legend_ax.legend(loc="center left", title="workload class\\n(filled: corrected)", ncol=2, fontsize=7,
                         title_fontsize=7, columnspacing=0.8, handletextpad=0.3)
        # One row per capture (horizontal bars: sixty-odd names stay legible).
        ax = axes[2]
        c = v[v["corrected"]].set_index("trace").loc[traces]
        raw = v[~v["corrected"]].set_index("trace").loc[traces]
        y = np.arange(len(traces))
        for i, (q, label) in enumerate([("energy_per_iteration_j", "energy"), ("time_per_iteration_s", "time")]):
            ax.barh(y + (i - 0.5) * 0.4, c[f"{q}_error_pct"].clip(-60, 60), 0.4,
                    label=f"{label} (corrected)", color=dp.PALETTE[i])
            ax.scatter(raw[f"{q}_error_pct"].clip(-60, 60), y + (i - 0.5) * 0.4, marker="x", s=10,
                       color="k", zorder=4, label="raw" if i == 0 else None)
        ax.set_yticks(y, [f"{t} [{k}]" for t, k in zip(traces, c["class"])])
        ax.set_ylim(len(traces) - 0.5, -0.5)
        ax.axvline(0, color="k", lw=0.8)
        for x in (-10, -5, 5, 10):
            ax.axvline(x, color="grey", lw=0.6, ls=":")
        ax.set_xlim(-62, 62)
        ax.set_xlabel("error vs measured (%), clipped at ±60; dotted: ±5 and ±10 %")
        ax.legend(ncol=3, loc="lower left", bbox_to_anchor=(0, 1.0))
        fig.suptitle(f"{display_name('h200')}, native: predicted (dvfsim) vs measured (NVML) per iteration")
        save(fig, "05-validation")
    '''),
    md("""
    **Figure 05-validation.** Top: predicted against measured energy and
    time per iteration on the H200 for every capture (log axes; dashed:
    perfect agreement; band: ±10 %; marker and colour: workload class;
    filled: with the profiler host-overhead correction, open: raw). Bottom:
    the relative error of
    energy and time per capture, one row each (bars: corrected; crosses:
    raw; both clipped at ±60 %), with the workload class in brackets. Measured values are NVML
    energy-counter windows of unprofiled steps; the replay uses the two
    profiled steps of each trace (five for "5 steps",
    `validation/h200/firststep/`, and "held out 2"); "held out" marks the
    seven workloads captured after every rule then was set
    (`validation/h200/heldout/`), "held out 2" six more captured after the
    L2 rule (`validation/h200/heldout2/`), "lease 12-04" thirteen of these
    workloads captured again on a third lease with five steps
    (`validation/h200/timing/`), "held out 3" ten captured on
    2026-12-04 after the SDPA class fix, three steps each
    (`validation/h200/heldout3/`), "held out 4" four depthwise and grouped
    networks captured after the depthwise instruction rule
    (`validation/h200/heldout4/`), "held out 5" eight workloads of operator
    families no capture had (Swin-T, DenseNet, 3-D and 1-D convolutions,
    embedding bags, HF generate, fp16 Wide ResNet, NCHW ResNet-18) captured
    with every rule frozen (`validation/h200/heldout5/`), "held out 6"
    three networks leaning on kernels of no known family (gathers and
    scatters, upsampling, sampling's sorts) captured after their fallback
    fraction was set (`validation/h200/heldout6/`), "held out 7" five
    convolution networks in the layouts that make cuDNN add layout
    transforms and SIMT kernels (3-D video and volumetric networks, NCHW
    segmentation, fp32 NCHW ResNet-50), captured on a fifth board after
    those kernels had rules (`validation/h200/heldout7/`), "board 12-06"
    VGG-16 and the 3-D U-Net of the third and seventh sets again on a sixth
    board (`validation/h200/ops/call12/`), "warm-up" BERT-large
    inference captured again with 0.35 s of profiler warm-up
    (`validation/h200/capwarmup/`). The
    launch-bound captures (small-batch training, KV-cache decode, MoE, T5,
    MobileNetV3) are those the correction moves. The misses: launch-bound
    host time, where the profiler's stretch differs from the default 2.06
    (HF GPT-2 b1 +25 % in time, the MLP −31 %, T5 −15 %; docs/validation.md,
    "How steady the stretch is": one workload's stretch moves by up to
    1.33× between one-second blocks), the two-step ViT capture (+9 % time,
    +7 % energy: its two steps' host; +3 % and +3 % with five steps), GPT-3
    medium with five steps on another lease (+14 % time, +12 % energy), the
    fp32 LSTM (−6 % energy), ResNet-18 of the second set (+26 % time, host
    stretch 2.61); memory-bound kernels on data in L2 draw less DRAM power
    (MoE +9.6 → +4.2 %, T5 +4.3 → −1.5 %, the second set's Llama +8.6 →
    −0.6 %); on the third lease GPT-3 medium (+13 % time, +12 % energy), the
    MLP (−15 %, −13 %), HF GPT-2 b1, MoE and T5 (−16 … −26 % in time), U-Net
    (+25 % time) and MobileNetV3, GPU-bound there (−6.5 % energy); of the
    third set, VGG-16 (+8.6 % energy: its convolutions read ReLU zeros in
    both passes, which the model does not know) and the same network
    diverged under SGD (+50 %: NaN operands draw little power, as data
    activity 0 would); ConvNeXt-T, partly host-bound, +8.6 % in time;
    ConvNeXt-T +10.4 % in energy (its 7×7 depthwise kernels draw less than
    the SIMT term prices their instructions); ShuffleNetV2, −12.8 % before
    the depthwise instruction rule and the L2 term of layout-changing
    copies, now −6.0 %; see
    docs/validation.md. The table is
    `figures/05-validation.csv`.
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

# ---------------------------------------------------------------------------
# The standard plots of a DVFS paper (issue 17): one step's clocks and power,
# energy by kernel class and phase, the energy-time Pareto front over the
# static pairs, switch counts and off-target time. All read step_policies.
STEP_INTRO = """
    Experiment `experiments/step_policies.yaml`: every policy on the shipped
    GPT-3 XL training step (captured on an H200) at each device's own
    clock-switch latency (seeded draws from its device file), objective
    `waste` with a 2 % slowdown budget, against `native`; `kernel-oracle`
    also with free switches (the Table 2 setting). Oracles read the future:
    their numbers are upper bounds. The sweep keeps full outputs
    (`timeline.csv`, `--full-outputs`).
"""

STEP_SETUP = '''
    df["config"] = df.apply(dp.config_label, axis=1)
    devices = list(dict.fromkeys(df["device"]))
    CONFIG_ORDER = ["native", "max", "power-limit", "static-best", "pass-level", "latency-aware",
                    "kernel-predictive", "kernel-oracle", "latency-oracle", "kernel-oracle, free switches"]
    configs = ordered(df["config"], CONFIG_ORDER)
    def run_row(device, config):
        r = df[(df["device"] == device) & (df["config"] == config)]
        if not len(r):
            raise dp.MissingResults(f"{RESULTS}: no run of {config} on {device}")
        return r.iloc[0]
    def config_style(config):
        p = config.split(",")[0]
        st = dp.policy_style(p, df)
        st["label"] = p + ("*" if dp.is_oracle(p, df) else "") + (", free switches" if "free" in config else "")
        if "free" in config:
            st["mfc"] = "none"
        return st
    def short(config):
        return (config.replace(", free switches", "\\n(free sw.)").replace("kernel-", "kernel-\\n", 1)
                .replace("latency-", "latency-\\n", 1) + ("*" if dp.is_oracle(config.split(",")[0], df) else ""))
'''

NOTEBOOKS["09-step-timeline.ipynb"] = notebook([
    md("""
    # Clocks and power over one training step, policy against native
    """ + STEP_INTRO),
    setup("step_policies"),
    code(STEP_SETUP),
    code('''
        DEVICE = "rtx3080ti" if "rtx3080ti" in devices else devices[0]
        # (policy, window): the whole step, or a zoom (ms from the step's start) where clocks change per kernel
        CASES = [(c, w) for c, w in [("latency-aware", None), ("kernel-oracle, free switches", "zoom")] if c in configs]
        ZOOM_MS = 25.0

        def last_step(config):
            """The last iteration of a run: its timeline segments, kernels and summary."""
            row = run_row(DEVICE, config)
            k = dp.read_kernels(dp.run_file(RESULTS, row, "kernels.csv"))
            t = pd.read_csv(dp.run_file(RESULTS, row, "timeline.csv"))
            s = json.loads(dp.run_file(RESULTS, row, "summary.json").read_text())
            it = k["iteration"].max()
            ki = k[k["iteration"] == it]
            t0, t1 = ki["start_ns"].min(), (ki["start_ns"] + ki["duration_ns"]).max()
            seg = t[(t["start_ns"] + t["duration_ns"] > t0) & (t["start_ns"] < t1)].copy()
            seg["t_ms"] = (seg["start_ns"].clip(lower=t0) - t0) / 1e6
            ki = ki.assign(t_ms=(ki["start_ns"] - t0) / 1e6)
            return row, seg, ki, (t1 - t0) / 1e6, s

        def steps(ax, x, y, end, **kw):
            x, y = np.asarray(x, float), np.asarray(y, float)
            ax.step(np.append(x, end), np.append(y, y[-1]), where="post", **kw)

        def binned_power(seg, end_ms, window_ms):
            """Power averaged over window_ms bins (energy / time): kernels are µs long."""
            start = seg["t_ms"].to_numpy()
            stop = np.append(start[1:], end_ms)
            edges = np.arange(0, end_ms + window_ms, window_ms)
            cum = np.concatenate([[0], np.cumsum(seg["power_w"].to_numpy() * (stop - start))])
            # energy up to time x: piecewise linear in x
            e = np.interp(edges, np.append(start, end_ms), cum)
            return edges[:-1], np.diff(e) / np.maximum(np.diff(np.minimum(edges, end_ms)), 1e-12)

        native = last_step("native")
        fig, axes = dp.figure("page", 5.0, nrows=3, ncols=len(CASES), squeeze=False, sharex="col",
                              gridspec_kw={"height_ratios": [1.2, 0.6, 1.2]})
        rows = []
        for j, (case, window) in enumerate(CASES):
            row, seg, ki, end_ms, s = last_step(case)
            _, nseg, nki, nend, ns = native
            lo, hi = 0.0, max(end_ms, nend)
            if window == "zoom":  # ZOOM_MS from the middle of the backward pass
                b = ki[ki["phase"] == "backward"]
                lo = float((b["t_ms"].min() + b["t_ms"].max()) / 2) if len(b) else end_ms / 2
                hi = lo + ZOOM_MS
            st = config_style(case)
            ax_c, ax_m, ax_p = axes[:, j]
            for ph, shade in [("backward", 0.08), ("optimizer", 0.18)]:
                p_ = ki[ki["phase"] == ph]
                if len(p_):
                    for ax in (ax_c, ax_m, ax_p):
                        ax.axvspan(p_["t_ms"].min(), (p_["t_ms"] + p_["duration_ns"] / 1e6).max(),
                                   color="k", alpha=shade, lw=0)
            steps(ax_c, nseg["t_ms"], nseg["core_mhz"], nend, color=COLORS["native"], lw=0.8, label="native")
            steps(ax_c, seg["t_ms"], seg["core_mhz"], end_ms, color=st["color"], lw=0.8,
                  label=f"{case}: effective clock")
            steps(ax_c, ki["t_ms"], ki["requested_core_mhz"], end_ms, color="k", lw=0.6, ls=":",
                  label=f"{case}: requested")
            steps(ax_m, nseg["t_ms"], nseg["memory_mhz"], nend, color=COLORS["native"], lw=0.8)
            steps(ax_m, seg["t_ms"], seg["memory_mhz"], end_ms, color=st["color"], lw=0.8)
            if window == "zoom":  # the kernels' own power
                steps(ax_p, nseg["t_ms"], nseg["power_w"], nend, color=COLORS["native"], lw=0.6)
                steps(ax_p, seg["t_ms"], seg["power_w"], end_ms, color=st["color"], lw=0.6)
                ax_p.set_ylabel("power (W)")
            else:
                for sg, e, color in [(nseg, nend, COLORS["native"]), (seg, end_ms, st["color"])]:
                    x, w = binned_power(sg, e, 10.0)
                    steps(ax_p, x, w, e, color=color, lw=0.8)
                ax_p.set_ylabel("power, 10 ms mean (W)")
            ax_c.set_xlim(lo, hi)
            what = "the whole step" if window is None else f"{ZOOM_MS:g} ms of the backward pass"
            ax_c.set_title(f"({'ab'[j]}) {case}{'*' if dp.is_oracle(case.split(',')[0], df) else ''}, {what}:\\n"
                           f"{row['energy_saving_pct']:.1f} % energy saved, {row['slowdown_pct']:+.2f} % time")
            ax_c.set_ylabel("core clock (MHz)")
            ax_m.set_ylabel("memory\\nclock (MHz)")
            ax_p.set_xlabel("time in the last training step (ms)")
            e_it, ne_it = s["iteration_energy_j"][-1], ns["iteration_energy_j"][-1]
            rows.append({"device": DEVICE, "config": case, "step_ms": end_ms, "native_step_ms": nend,
                         "step_energy_j": e_it, "native_step_energy_j": ne_it,
                         "mean_power_w": 1e3 * e_it / end_ms, "native_mean_power_w": 1e3 * ne_it / nend,
                         "clock_switches": int(row["clock_switches"]), "off_target_s": row["off_target_s"],
                         "energy_saving_pct": row["energy_saving_pct"], "slowdown_pct": row["slowdown_pct"]})
        handles, labels = [], []
        for ax in axes[0]:
            for h, l in zip(*ax.get_legend_handles_labels()):
                if l not in labels:
                    handles.append(h); labels.append(l)
        fig.get_layout_engine().set(rect=(0, 0.07, 1, 0.93))
        fig.legend(handles, labels, loc="lower center", ncol=3)
        fig.suptitle(f"GPT-3 XL step on {display_name(DEVICE)} against native "
                     "(shaded: backward; darker: optimizer; * oracle)")
        save(fig, "09-step-timeline")
        t = pd.DataFrame(rows)
        dp.write_table(t, "09-step-timeline", index=False)
        t.round(3)
    '''),
    md("""
    **Figure 09-step-timeline.** The last of the two replayed training steps
    of GPT-3 XL on the RTX 3080 Ti model: core clock (top), memory clock
    (middle) and board power averaged over 1 ms (bottom) against time, the
    policy (colour) over `native` (grey). Left: `latency-aware` at the
    card's own switch latency (a few segments per step, each switch issued
    early; the gap between the dotted request and the effective clock is
    off-target time while a switch is pending, or the firmware's power cap);
    right: `kernel-oracle` with free switches, one pair per kernel (an
    upper bound). Forward, backward (light shade) and optimizer (darker)
    are marked. The table (`figures/09-step-timeline.csv`) has the step's
    time, energy and mean power of both.
    """),
])

NOTEBOOKS["10-energy-breakdown.ipynb"] = notebook([
    md("""
    # Energy by kernel class and training phase
    """ + STEP_INTRO + """
    Each run's `kernels.csv` holds the energy of every activity and of the
    same activity under the baseline (`baseline_energy_j`); the energy not in
    any activity (idle gaps, switch stalls) is the run's total minus their sum.
    """),
    setup("step_policies"),
    code(STEP_SETUP),
    code('''
        rows = []
        for _, r in df.iterrows():
            k = dp.read_kernels(dp.run_file(RESULTS, r, "kernels.csv"))
            n = max(int(r["iterations"]), 1)
            for key in ("class", "phase"):
                g = k.groupby(key)[["energy_j", "baseline_energy_j", "duration_ns", "baseline_duration_ns"]].sum()
                for name, v in g.iterrows():
                    rows.append({"device": r["device"], "config": r["config"], "by": key, "group": name,
                                 "energy_j": v["energy_j"] / n, "baseline_energy_j": v["baseline_energy_j"] / n,
                                 "time_ms": v["duration_ns"] / 1e6 / n,
                                 "baseline_time_ms": v["baseline_duration_ns"] / 1e6 / n})
                rows.append({"device": r["device"], "config": r["config"], "by": key, "group": "not in a kernel",
                             "energy_j": r["energy_j"] / n - k["energy_j"].sum() / n,
                             "baseline_energy_j": r["baseline_energy_j"] / n - k["baseline_energy_j"].sum() / n,
                             "time_ms": np.nan, "baseline_time_ms": np.nan})
        e = pd.DataFrame(rows)
        e["saved_j"] = e["baseline_energy_j"] - e["energy_j"]
        dp.write_table(e, "10-energy-breakdown", index=False)
        classes = (e[(e["by"] == "class") & (e["config"] == "native")].groupby("group")["energy_j"].sum()
                   .sort_values(ascending=False).index.tolist())
        classes = [c for c in classes if c != "not in a kernel"] + ["not in a kernel"]
        phases = ordered(e.loc[e["by"] == "phase", "group"], ["forward", "backward", "optimizer", "other", "not in a kernel"])
        e[e["config"] == "native"].pivot_table(index=["device", "by", "group"], values=["energy_j", "time_ms"]).round(2)
    '''),
    code('''
        shown = [c for c in configs if c not in ("max",)][::-1]  # top to bottom in CONFIG_ORDER
        main = [c for c in classes if c != "not in a kernel"][:6]
        groups = main + ["other classes", "not in a kernel"]
        group_colors = dict(zip(groups, dp.PALETTE[:len(main)] + ["#777777", "#CCCCCC"]))
        # phases apart from the classes: Paul Tol's indigo, wine and teal
        PHASE_COLORS = {"forward": "#332288", "backward": "#882255", "optimizer": "#44AA99", "other": "#999933"}
        def class_group(c):
            return c if c in main or c == "not in a kernel" else "other classes"
        fig, axes = dp.figure("page", 1.9 * len(devices) + 0.7, nrows=len(devices), ncols=2, squeeze=False,
                              sharey="row")
        width = 0.8 / max(len(phases), 1)
        y = np.arange(len(shown))
        for i, d in enumerate(devices):
            sub = e[(e["device"] == d) & (e["by"] == "class")].copy()
            sub["g"] = sub["group"].map(class_group)
            ax = axes[i, 0]
            left = np.zeros(len(shown))
            for g in groups:
                v = sub[sub["g"] == g].groupby("config")["energy_j"].sum().reindex(shown).fillna(0).to_numpy()
                ax.barh(y, v, 0.75, left=left, color=group_colors[g], label=g, edgecolor="white", linewidth=0.3)
                left += v
            ax.set_xlim(0, 1.18 * left.max())
            for yi, l, c in zip(y, left, shown):
                sv = df[(df["device"] == d) & (df["config"] == c)]["energy_saving_pct"].iloc[0]
                ax.text(l, yi, f" {sv:.1f} %", ha="left", va="center", fontsize=7)
            ax.set_yticks(y, [c.replace("free switches", "free sw.") + ("*" if dp.is_oracle(c.split(",")[0], df) else "")
                              for c in shown])
            ax.set_xlabel("energy / iteration (J)")
            ax.set_title(f"{display_name(d)}: by kernel class (saving vs native)")
            ax = axes[i, 1]
            sub = e[(e["device"] == d) & (e["by"] == "phase")]
            for j, ph in enumerate(phases):
                v = sub[sub["group"] == ph].set_index("config")["saved_j"].reindex(shown).fillna(0).to_numpy()
                ax.barh(y + ((len(phases) - 1) / 2 - j) * width, v, width, label=ph,
                        color=PHASE_COLORS.get(ph, "#CCCCCC"))
            ax.axvline(0, color="k", lw=0.6)
            ax.set_xlabel("saved vs native (J / iteration)")
            ax.set_title(f"{display_name(d)}: saving by phase")
        h1, l1 = axes[0, 0].get_legend_handles_labels()
        h2, l2 = axes[0, 1].get_legend_handles_labels()
        fig.get_layout_engine().set(rect=(0, 0.075, 1, 0.925))
        hh = h1 + [h for h, l in zip(h2, l2) if l != "not in a kernel"]
        ll = [f"class {x}" if x not in ("other classes", "not in a kernel") else x for x in l1] + \
             [f"phase {x}" for x in l2 if x != "not in a kernel"]
        fig.legend(hh, ll, loc="lower center", ncol=5)
        fig.suptitle("GPT-3 XL training step: energy by kernel class and by phase (* oracle: an upper bound)")
        save(fig, "10-energy-breakdown")
    '''),
    md("""
    **Figure 10-energy-breakdown.** Left: energy per iteration of each
    policy, stacked by kernel class (grey: energy outside any kernel, idle
    gaps and switch stalls), with the saving against `native` on top; right:
    the energy each policy saves against `native` in each training phase
    (negative: it spends more there). One row per GPU model, all at the
    device's own switch latency except `kernel-oracle (free sw.)`; `max` is
    left out (the top clocks, ±0.3 % of native). GEMMs dominate the energy;
    savings come mostly from the backward pass, which is the longest. The
    numbers per class and phase are in `figures/10-energy-breakdown.csv`.
    """),
])

NOTEBOOKS["11-pareto-front.ipynb"] = notebook([
    md("""
    # The energy-time Pareto front per device over the static clock pairs

    Experiments `experiments/static_cloud_<device>.yaml`: the shipped GPT-3
    XL training step under `static` at a grid of (core, memory) clock pairs
    on each device (every supported memory clock); time and energy per
    iteration of each pair form the cloud, whose lower-left envelope is the
    Pareto front of fixed clocks. On top: the policies of
    `experiments/step_policies.yaml` (each device's own switch latency, 2 %
    budget).
    """),
    setup("step_policies"),
    code(STEP_SETUP),
    code('''
        def pareto(points):
            """Indices of the points no other point beats in both time and energy."""
            order = points.sort_values(["time_per_iteration_s", "energy_per_iteration_j"]).index
            front, best = [], np.inf
            for i in order:
                if points.at[i, "energy_per_iteration_j"] < best - 1e-12:
                    front.append(i)
                    best = points.at[i, "energy_per_iteration_j"]
            return front

        fig, axes = dp.figure("page", 5.6, nrows=2, ncols=len(devices), squeeze=False,
                              gridspec_kw={"height_ratios": [1.25, 1]})
        rows = []
        for ax, ins, d in zip(axes[0], axes[1], devices):
            _, cloud = dp.load_results(f"static_cloud_{d}", quiet=True)
            cloud = cloud.copy()
            cloud["t_ms"] = 1e3 * cloud["time_per_iteration_s"]
            nat = run_row(d, "native")
            t_nat = 1e3 * nat["time_per_iteration_s"]
            # the interesting part: up to 1.6x native time (the slowest pairs take 10x)
            XMAX = 1.75
            view = cloud[cloud["t_ms"] <= XMAX * t_nat]
            mems = sorted(cloud["memory_mhz"].unique())
            cmap = plt.get_cmap("cividis", max(len(mems), 2))
            for j, m in enumerate(mems):
                v = view[view["memory_mhz"] == m]
                ax.scatter(v["t_ms"], v["energy_per_iteration_j"], s=7, color=cmap(j), alpha=0.8,
                           label="static pair (dark to light: lower to higher memory clock)", linewidths=0)
            f = cloud.loc[pareto(cloud)]
            fv = f[f["t_ms"] <= XMAX * t_nat]
            ins.plot(f["t_ms"], f["energy_per_iteration_j"], color="k", lw=0.8)
            for j, m in enumerate(mems):
                v = cloud[cloud["memory_mhz"] == m]
                ins.scatter(v["t_ms"], v["energy_per_iteration_j"], s=7, color=cmap(j), alpha=0.8, linewidths=0)
            ax.plot(fv["t_ms"], fv["energy_per_iteration_j"], color="k", lw=0.8, label="Pareto front of static pairs")
            for c in configs:
                r = run_row(d, c)
                st = config_style(c)
                ax.plot(1e3 * r["time_per_iteration_s"], r["energy_per_iteration_j"], ls="none",
                        marker=st["marker"], color=st["color"], mfc=st.get("mfc", st["color"]), ms=5,
                        mew=1.0, label=st["label"], zorder=5)
                ins.plot(1e3 * r["time_per_iteration_s"], r["energy_per_iteration_j"], ls="none",
                         marker=st["marker"], color=st["color"], mfc=st.get("mfc", st["color"]), ms=4, mew=0.8, zorder=5)
                # distance above the front at the same time (interpolated), in % of the front's energy
                ft = f.sort_values("t_ms")
                e_front = np.interp(1e3 * r["time_per_iteration_s"], ft["t_ms"], ft["energy_per_iteration_j"])
                rows.append({"device": d, "config": c, "time_ms": 1e3 * r["time_per_iteration_s"],
                             "energy_j": r["energy_per_iteration_j"], "front_energy_j_at_time": e_front,
                             "above_front_pct": 100 * (r["energy_per_iteration_j"] / e_front - 1)})
            e_nat = nat["energy_per_iteration_j"]
            ins.set_xlim(0.985 * t_nat, 1.035 * t_nat)
            ins.set_ylim(0.9 * e_nat, 1.01 * e_nat)
            ins.set_xlabel("time / iteration (ms)")
            ins.set_title("(zoom) near native")
            emin = cloud.loc[cloud["energy_per_iteration_j"].idxmin()]
            ax.annotate(f"least energy: {emin['core_mhz']:.0f}/{emin['memory_mhz']:.0f} MHz,\\n"
                        f"{emin['energy_per_iteration_j']:.0f} J at {emin['t_ms']:.0f} ms"
                        + ("" if emin["t_ms"] <= XMAX * t_nat else " (off the plot)"),
                        (0.97, 0.97), xycoords="axes fraction", ha="right", va="top", fontsize=7)
            ax.set_xlim(right=XMAX * t_nat)
            ax.set_xlabel("time / iteration (ms)")
            ax.set_title(f"{display_name(d)}: {len(cloud)} static pairs,\\nmemory "
                         + ", ".join(f"{m:.0f}" for m in mems) + " MHz")
        axes[0, 0].set_ylabel("energy / iteration (J)")
        axes[1, 0].set_ylabel("energy / iteration (J)")
        handles, labels = [], []
        for ax in axes[0]:
            for h, l in zip(*ax.get_legend_handles_labels()):
                if l not in labels:
                    handles.append(h); labels.append(l)
        fig.get_layout_engine().set(rect=(0, 0.13, 1, 0.87))
        fig.legend(handles, labels, loc="lower center", ncol=3)
        fig.suptitle("GPT-3 XL training step: energy against time per iteration, static pairs and policies "
                     "(* oracle: an upper bound)")
        save(fig, "11-pareto-front")
        t = pd.DataFrame(rows)
        dp.write_table(t, "11-pareto-front", index=False)
        t.round(2)
    '''),
    md("""
    **Figure 11-pareto-front.** Energy against time per iteration for every
    static (core, memory) pair of the grid (dots, colour: memory clock;
    pairs slower than 1.75 × native are off the plot but in the front), the
    Pareto front of the static pairs (black line: no pair is faster and
    cheaper at once), and each policy at its own point (markers; open:
    `kernel-oracle` with free switches, the only point that may sit below
    the static front, since it changes clocks per kernel; * oracles, upper
    bounds). Bottom: the same around `native` (−1.5 to +3.5 % time, −10 to
    +1 % energy). Column `above_front_pct` of `figures/11-pareto-front.csv` gives
    each policy's energy above the front at its own time (negative: below it).
    """),
])

NOTEBOOKS["12-switches.ipynb"] = notebook([
    md("""
    # Clock switches, their latencies and off-target time
    """ + STEP_INTRO + """
    Counted per iteration: clock switches (core and memory rows of
    `clock_switches.csv`, as `summary.json` counts them); off-target time
    (`off_target_s`: time while a requested switch has not landed, the
    clocks other than those the policy wanted); time the firmware's power
    cap held the core below the request (`power_capped_s`) and memory-switch
    stalls (`switch_stall_s`), as a share of the run time.
    """),
    setup("step_policies"),
    code(STEP_SETUP),
    code('''
        rows, lat = [], []
        for _, r in df.iterrows():
            sw = pd.read_csv(dp.run_file(RESULTS, r, "clock_switches.csv"))
            n = max(int(r["iterations"]), 1)
            counted = sw[sw["domain"].isin(["core", "memory"])]
            assert len(counted) == int(r["clock_switches"]), (r["run_id"], len(counted), r["clock_switches"])
            rows.append({"device": r["device"], "config": r["config"],
                         "core_switches_per_iteration": (sw["domain"] == "core").sum() / n,
                         "memory_switches_per_iteration": (sw["domain"] == "memory").sum() / n,
                         "cap_moves_per_iteration": (sw["domain"] == "power_cap").sum() / n,
                         "off_target_pct": 100 * r["off_target_s"] / r["time_s"],
                         "power_capped_pct": 100 * r["power_capped_s"] / r["time_s"],
                         "stall_pct": 100 * r["switch_stall_s"] / r["time_s"],
                         "energy_saving_pct": r["energy_saving_pct"], "slowdown_pct": r["slowdown_pct"]})
            if "free" not in r["config"]:
                for _, x in counted.iterrows():
                    lat.append({"device": r["device"], "domain": x["domain"], "latency_ms": x["latency_ns"] / 1e6})
        s = pd.DataFrame(rows)
        lat = pd.DataFrame(lat, columns=["device", "domain", "latency_ms"])
        dp.write_table(s, "12-switches", index=False)
        s.round(3)
    '''),
    code('''
        shown = [c for c in configs if c not in ("native", "max", "power-limit")][::-1]
        labels = [c.replace("free switches", "free sw.") + ("*" if dp.is_oracle(c.split(",")[0], df) else "") for c in shown]
        fig, axes = dp.figure("page", 5.6, nrows=3, ncols=len(devices), squeeze=False,
                              gridspec_kw={"height_ratios": [1, 1.1, 0.75]})
        y = np.arange(len(shown))
        for i, d in enumerate(devices):
            sub = s[s["device"] == d].set_index("config").reindex(shown)
            ax = axes[0, i]
            core, mem = sub["core_switches_per_iteration"].fillna(0), sub["memory_switches_per_iteration"].fillna(0)
            ax.barh(y, core, 0.7, color=[COLORS.get(c.split(",")[0]) for c in shown], label="core")
            ax.barh(y, mem, 0.7, left=core, color="white", edgecolor="k", hatch="///", lw=0.5, label="memory")
            for yi, v in zip(y, core + mem):
                ax.text(max(v, 0.55), yi, f" {v:g}", ha="left", va="center", fontsize=7)
            ax.set_xscale("log")
            ax.set_xlim(0.5, 30 * max(2, (core + mem).max()))
            ax.set_yticks(y, labels if i == 0 else [])
            ax.set_xlabel("clock switches / iteration")
            ax.set_title(display_name(d))
            ax = axes[1, i]
            w = 0.27
            for j, (col, label, color) in enumerate([("off_target_pct", "off target (switch pending)", dp.OKABE_ITO["vermillion"]),
                                                      ("power_capped_pct", "held by the power cap", dp.OKABE_ITO["sky"]),
                                                      ("stall_pct", "memory-switch stall", dp.OKABE_ITO["black"])]):
                ax.barh(y + (1 - j) * w, sub[col].fillna(0), w, color=color, label=label)
            ax.set_yticks(y, labels if i == 0 else [])
            ax.set_xlim(0, 105)
            ax.set_xlabel("share of the run time (%)")
            ax = axes[2, i]
            l = lat[lat["device"] == d]
            for dom, color in [("core", dp.OKABE_ITO["blue"]), ("memory", dp.OKABE_ITO["orange"])]:
                v = np.sort(l.loc[l["domain"] == dom, "latency_ms"].to_numpy())
                if len(v):
                    ax.step(np.append(v, v[-1]), np.append(np.arange(1, len(v) + 1) / len(v), 1.0), where="post",
                            color=color, lw=0.9, label=f"{dom} ({len(v)} switches)")
            ax.set_xscale("log")
            ax.set_xlabel("switch latency drawn (ms)")
            ax.set_ylim(0, 1.05)
            ax.legend(loc="lower right")
        def one_two_five(v, _pos=None):
            m = round(v / 10 ** np.floor(np.log10(v)), 6)
            return f"{v:g}" if m in (1, 2, 5) else ""
        for ax in axes[2]:
            ax.xaxis.set_major_formatter(FuncFormatter(one_two_five))
            ax.xaxis.set_minor_formatter(FuncFormatter(one_two_five))
        axes[2, 0].set_ylabel("cumulative share")
        axes[0, -1].legend(loc="upper right")
        axes[1, 1 if len(devices) > 1 else 0].legend(loc="upper right")
        fig.suptitle("GPT-3 XL training step: clock switches, time at other clocks than requested, "
                     "switch latencies (* oracle)")
        save(fig, "12-switches")
    '''),
    md("""
    **Figure 12-switches.** Top: clock switches per iteration of each
    policy (log scale; core in the policy's colour, memory hatched) on each
    device. Bottom: the share of the run time the GPU ran at clocks other
    than the policy wanted, split into off-target time (a requested switch
    not landed yet: the device's switch latency, inset as the distribution
    of the latencies the runs drew), time held below the request by the
    firmware's power cap, and memory-switch stalls. Per-kernel plans switch
    thousands of times per iteration when switches are free and not at all
    at the devices' own latencies (tens of ms: `kernel-oracle` and
    `kernel-predictive` fall back to the default clocks); segment plans
    (`latency-aware`, `latency-oracle`) switch a few times and pay for it
    in off-target time. The numbers are in `figures/12-switches.csv`.
    """),
])


# ---------------------------------------------------------------------------
NOTEBOOKS["13-pipeline.ipynb"] = notebook([
    md("""
    # Pipeline-parallel GPT-3 XL: energy against iteration time, and stragglers

    Experiment `experiments/pipeline_gpt3xl.yaml` (docs/parallel.md): the
    shipped GPT-3 XL step cut into 4 and 8 pipeline stages (1F1B, 128
    microbatches; the small copy: 8), on the A100 SXM and H200 models, under
    `max` (the baseline: every GPU at its highest clocks), `native`,
    `power-limit` (Zeus-style, one limit for every GPU) and `perseus` (one
    SM clock per forward/backward instruction from the iteration time-energy
    frontier, within 1 % of the fastest iteration), with a straggler on rank
    3 slowed by 0-30 %. `perseus+kernel` (where the results have it) also
    plans the kernels inside each instruction (with free clock switches:
    per-kernel clocks cannot follow tens of ms of switch latency; an upper
    bound of combining the two ideas). Energies and times are per
    iteration of the whole job; the frontier is `perseus`'s planned one
    (`frontier.csv` of the run without straggler).
    """),
    setup("pipeline_gpt3xl"),
    code('''
        def pipe_config(r):
            inner = r.get("inner")
            name = r["policy"]
            if name == "perseus" and isinstance(inner, str) and inner not in ("", "none"):
                name = "perseus+kernel"
            return name + (", free switches" if dp.config_label(r).endswith("free switches") else "")
        def style(c):
            st = dp.policy_style(c.split(",")[0], df)
            st["label"] = c.replace(",", ("*" if dp.is_oracle(c.split(",")[0], df) else "") + ",", 1) \
                if "," in c else dp.policy_style(c, df)["label"]
            return st
        df["config"] = df.apply(pipe_config, axis=1)
        df["pct"] = df["straggler"].astype(str).str.split(":").str[-1].astype(float)
        df["pp"] = df["parallel"].astype(str).str.extract(r"pp=(\\d+)")[0].astype(int)
        df["M"] = df["parallel"].astype(str).str.extract(r"microbatches=(\\d+)")[0].astype(int)
        devices = list(dict.fromkeys(df["device"]))
        pps = sorted(df["pp"].unique())
        configs = ordered(df["config"], ["max", "native", "power-limit", "perseus", "perseus, free switches",
                                         "perseus+kernel", "perseus+kernel, free switches"])
        panels = [(d, pp) for d in devices for pp in pps]
        table = df.pivot_table(index=["device", "pp", "pct"], columns="config",
                               values=["energy_saving_pct", "slowdown_pct"])
        dp.write_table(table, "13-pipeline")
        table.round(2)
    '''),
    code('''
        fig, axes = dp.figure("page", 6.2, nrows=3, ncols=len(panels), squeeze=False,
                              gridspec_kw={"height_ratios": [1.4, 1, 1]})
        for j, (d, pp) in enumerate(panels):
            sub = df[(df["device"] == d) & (df["pp"] == pp)]
            M = int(sub["M"].iloc[0])
            ax = axes[0, j]
            clean = sub[sub["pct"] == 0]
            t_max = 1e3 * clean[clean["config"] == "max"]["time_per_iteration_s"].iloc[0] \\
                if (clean["config"] == "max").any() else None
            for c in configs:
                r = clean[clean["config"] == c]
                if not len(r):
                    continue
                r = r.iloc[0]
                st = style(c)
                if c.startswith("perseus"):
                    f = dp.run_file(RESULTS, r, "frontier.csv")
                    fr = pd.read_csv(f)
                    if t_max:
                        fr = fr[fr["iteration_s"] * 1e3 <= 1.35 * t_max]
                    ax.plot(1e3 * fr["iteration_s"], fr["energy_j"], color=st["color"], lw=0.8,
                            ls="-" if c == "perseus" else "--", label=f"{c}: frontier (planned)")
                ax.plot(1e3 * r["time_per_iteration_s"], r["energy_per_iteration_j"], ls="none",
                        marker=st["marker"], color=st["color"], ms=5, label=st["label"], zorder=5)
            ax.set_xlabel("time / iteration (ms)")
            ax.set_title(f"{display_name(d)}\\npp={pp}, M={M}")
            for row, col, label in [(1, "energy_saving_pct", "energy saving vs max (%)"),
                                    (2, "slowdown_pct", "slowdown vs max (%)")]:
                ax = axes[row, j]
                for c in configs:
                    if c == "max":
                        continue
                    r = sub[sub["config"] == c].sort_values("pct")
                    if len(r):
                        ax.plot(r["pct"], r[col], **style(c))
                ax.axhline(0, color="k", lw=0.6)
                if row == 2:
                    ax.axhline(1, color="k", lw=0.6, ls=":")
                    ax.set_xlabel("straggler, rank 3 (%)")
                if j == 0:
                    ax.set_ylabel(label)
        axes[0, 0].set_ylabel("energy / iteration, all GPUs (J)")
        handles, labels = [], []
        for ax in axes[0]:
            for h, l in zip(*ax.get_legend_handles_labels()):
                if l not in labels:
                    handles.append(h); labels.append(l)
        fig.get_layout_engine().set(rect=(0, 0.09, 1, 0.91))
        fig.legend(handles, labels, loc="lower center", ncol=3)
        fig.suptitle("GPT-3 XL pipeline (1F1B): energy vs time, no straggler (top); "
                     "saving and slowdown vs max with one")
        save(fig, "13-pipeline")
    '''),
    md("""
    **Figure 13-pipeline.** Top: energy per iteration of the whole job
    against iteration time without a straggler, one panel per GPU model and
    pipeline depth: `perseus`'s planned frontier (line; every plan of the
    Phillips-Dessouky trade-off, from all instructions at their least-energy
    clock on the right to the fastest iteration on the left) and each policy
    as replayed (markers; `power-limit` is an oracle, an upper bound). Middle
    and bottom: energy saving and slowdown against `max` on the same job as
    rank 3 (the last stage at pp=4) straggles by 0-30 %; the dotted line is
    `perseus`'s 1 % budget. `perseus` keeps the slowdown near its budget and
    takes the slack of the stages that wait for the straggler (extrinsic
    bloat) on top of the bubbles' (intrinsic). The numbers are in
    `figures/13-pipeline.csv`.
    """),
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
