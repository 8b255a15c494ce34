#!/usr/bin/env python3
"""Renders each device file's numbers, status and sources as the markdown
tables of docs/devices.md, so the doc cannot drift from models/devices/*.yaml.

  scripts/device_tables.py          rewrite the tables in docs/devices.md
  scripts/device_tables.py --check  exit 1 if docs/devices.md is out of date

A device file without a section gets one (capture-only files under
"## Capture devices: files"), so adding a device is adding its YAML.
"""
import pathlib
import re
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "devices.md"
HEADER = "| parameter | value | status | source / reasoning |\n|---|---|---|---|\n"


def status(source):
    kind = source.split(":", 1)[0].strip()
    if source.startswith("http"):
        return "read"
    return "**assumed**" if kind == "assumption" else kind


def fmt_number(v):
    return f"{v:g}" if isinstance(v, float) else str(v)


def clock_list(node):
    if "values" in node:
        v = node["values"]
        return f"{v[0]}..{v[-1]} ({len(v)} values)" if len(v) > 6 else ", ".join(map(str, v))
    n = (node["max"] - node["min"]) // node["step"] + 1
    return f"{node['min']}..{node['max']} step {node['step']} ({n} values)"


def latency(node):
    d = node["distribution"]
    if d == "fixed":
        return f"fixed {fmt_number(node['value_us'])} µs"
    if d == "uniform":
        return f"uniform [{fmt_number(node['min_us'])}, {fmt_number(node['max_us'])}] µs"
    return (f"lognormal, median {fmt_number(node['median_us'])} µs, σ {fmt_number(node['sigma'])}, "
            f"[{fmt_number(node['min_us'])}, {fmt_number(node['max_us'])}] µs")


def rows(dev):
    out = []

    def add(field, value, source):
        out.append(f"| `{field}` | {value} | {status(source)} | {source} |")

    c = dev["clocks"]
    add("clocks.core_mhz", clock_list(c["core_mhz"]), c["core_mhz"]["source"])
    add("clocks.memory_mhz", clock_list(c["memory_mhz"]), c["memory_mhz"]["source"])
    for lim in c.get("memory_core_limits", []) or []:
        add("clocks.memory_core_limits", f"{lim['memory_mhz']} MHz memory only with core ≤ {lim['max_core_mhz']} MHz",
            lim["source"])
    d = c["default"]
    add("clocks.default", f"{d['core_mhz']} / {d['memory_mhz']}", d["source"])
    add("clocks.deep_idle_core_mhz", fmt_number(c["deep_idle_core_mhz"]["value"]), c["deep_idle_core_mhz"]["source"])
    v = dev.get("voltage")
    if v:
        add("voltage.points (MHz, V)", " ".join(f"({p[0]}, {fmt_number(float(p[1]))})" for p in v["points"]),
            v["source"])
    # power, governor and switch_latency are absent from capture-only device files.
    for section in ("compute", "memory", "latency", "power", "governor"):
        for key, node in (dev.get(section) or {}).items():
            if key == "model":  # the registered model that reads the section (`dvfsim models`)
                out.append(f"| `{section}.model` | {node} | model | the section's keys are this model's parameters |")
                continue
            add(f"{section}.{key}", fmt_number(node["value"]), node["source"])
    s = dev.get("switch_latency")
    if not s:
        return "\n".join(out) + "\n"
    add("switch_latency.core", latency(s["core"]), s["core"]["source"])
    add("switch_latency.memory", latency(s["memory"]), s["memory"]["source"])
    add("switch_latency.memory_stall_us", fmt_number(s["memory_stall_us"]["value"]), s["memory_stall_us"]["source"])
    return "\n".join(out) + "\n"


def capture_rows(dev):
    """Rows of a capture-only device file (role: capture)."""
    out = []

    def add(field, value, source):
        out.append(f"| `{field}` | {value} | {status(source)} | {source} |")

    out.append("| `nvml_names` | " + ", ".join(f"`{n}`" for n in dev["nvml_names"]) +
               " | read | the names the driver reports (deviceProperties) |")
    c = dev["compute"]
    for key in ("sm_count", "peak_clock_mhz", "tensor_peak_clock_mhz"):
        if key in c:
            add(f"compute.{key}", fmt_number(c[key]["value"]), c[key]["source"])
    for key, node in c["peak_tflops"].items():
        add(f"compute.peak_tflops.{key}", fmt_number(node["value"]), node["source"])
    for key, node in dev["memory"].items():
        add(f"memory.{key}", fmt_number(node["value"]), node["source"])
    d = dev["clocks"]["default"]
    add("clocks.default", f"{d['core_mhz']} / {d['memory_mhz']}", d["source"])
    m = dev["clocks"]["max_core_mhz"]
    add("clocks.max_core_mhz", fmt_number(m["value"]), m["source"])
    return "\n".join(out) + "\n"


CAPTURE_SECTION = "## Capture devices: files"


def add_section(doc, dev):
    """A '### name — display' section with an empty table, appended to the
    section its kind belongs to (targets under '## Devices', capture-only
    files under CAPTURE_SECTION, created when missing)."""
    parent = CAPTURE_SECTION if dev.get("role") == "capture" else "## Devices"
    block = f"### {dev['name']} — {dev['display_name']}\n\n{HEADER}\n"
    at = re.search(rf"^{re.escape(parent)}$", doc, re.M)
    if not at:
        intro = ("\nOne file per GPU a trace may come from (`role: capture`): dense peaks per "
                 "data type, DRAM bandwidth, L2, SMs and clocks, each with its source. "
                 "Written by `scripts/device_tables.py` from `models/devices/*.yaml`.\n\n")
        doc = doc.rstrip("\n") + f"\n\n{parent}\n{intro}"
        at = re.search(rf"^{re.escape(parent)}$", doc, re.M)
    nxt = re.search(r"^## ", doc[at.end():], re.M)
    pos = at.end() + nxt.start() if nxt else len(doc)
    return doc[:pos] + block + doc[pos:]


def render(doc):
    for path in sorted((ROOT / "models" / "devices").glob("*.yaml")):
        dev = yaml.safe_load(path.read_text())
        heading = re.search(rf"^### {re.escape(dev['name'])} — .*$", doc, re.M)
        if not heading:
            doc = add_section(doc, dev)
            heading = re.search(rf"^### {re.escape(dev['name'])} — .*$", doc, re.M)
        start = doc.index(HEADER, heading.end())
        end = start + len(HEADER)
        while end < len(doc) and doc.startswith("| ", end):
            end = doc.index("\n", end) + 1
        table = capture_rows(dev) if dev.get("role") == "capture" else rows(dev)
        doc = doc[:start] + HEADER + table + doc[end:]
    return doc


def main():
    old = DOC.read_text()
    new = render(old)
    if "--check" in sys.argv[1:]:
        if new != old:
            sys.exit("docs/devices.md is out of date with models/devices/*.yaml: run scripts/device_tables.py")
        return
    DOC.write_text(new)


if __name__ == "__main__":
    main()
