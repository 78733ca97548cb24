"""metrics.md of `hyloop compare`: the summaries of the runs side by side, best value in bold."""

import json
import math

_ORDER = ["scenario", "compensator", "diverged", "steps", "duration_s", "wall_time_s",
          "energy_ratio", "metrics.e_F_peak_N", "metrics.e_V_peak_mps", "metrics.e_R",
          "metrics.amplitude_ratio"]
# How to pick the best value of a row: "min" (smallest magnitude) or "one" (closest to 1).
_BEST = {"energy_ratio": "one", "metrics.e_F_peak_N": "min", "metrics.e_V_peak_mps": "min",
         "metrics.e_R": "one", "metrics.amplitude_ratio": "one"}


def _flatten(d, prefix=""):
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def _cell(v):
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, (list, tuple)):
        s = json.dumps(v)
        return s if len(s) <= 40 else s[:37] + "..."
    return str(v).replace("|", "\\|").replace("\n", " ")


def metrics_markdown(runs, labels, plots):
    flat = [_flatten(r.summary) for r in runs]
    keys = [k for k in _ORDER if any(k in f for f in flat)]
    for f in flat:
        for k in f:
            if k not in keys:
                keys.append(k)
    lines_ = ["# hyloop compare", ""]
    lines_.append("Runs: " + ", ".join(f"`{r.path}`" for r in runs))
    lines_.append("")
    lines_.append("| metric | " + " | ".join(_cell(lab) for lab in labels) + " |")
    lines_.append("|---|" + "---:|" * len(runs))
    lines_.append("| run directory | " + " | ".join(_cell(r.dirname) for r in runs) + " |")
    for k in keys:
        vals = [f.get(k) for f in flat]
        cells = [_cell(v) for v in vals]
        rule = _BEST.get(k)
        nums = [(i, float(v)) for i, v in enumerate(vals)
                if isinstance(v, (int, float)) and not isinstance(v, bool)
                and math.isfinite(float(v))]
        if rule and len(nums) > 1:
            score = (lambda x: abs(x)) if rule == "min" else (lambda x: abs(x - 1.0))
            best = min(score(x) for _, x in nums)
            for i, x in nums:
                if score(x) == best:
                    cells[i] = f"**{cells[i]}**"
        lines_.append(f"| {k} | " + " | ".join(cells) + " |")
    lines_ += ["",
               "Bold: best of the row (smallest peak error; ratio closest to 1). Peaks are the "
               f"largest magnitude over the final {window_text(runs)} (metrics.window_s); e_R "
               "and amplitude ratio are the per-cycle values farthest from 1 among cycles "
               "ending in that window (DESIGN.md §7).", ""]
    if plots:
        lines_.append("## Plots")
        lines_.append("")
        for p in plots:
            lines_.append(f"![{p}]({p})")
        lines_.append("")
    return "\n".join(lines_)


def window_text(runs):
    """The runs' metric window: "5 s", or "2 s / 5 s" when they differ."""
    ws = []
    for r in runs:
        w = f"{r.window():g} s"
        if w not in ws:
            ws.append(w)
    return " / ".join(ws)

