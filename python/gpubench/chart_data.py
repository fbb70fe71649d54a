"""The data side of gpubench's charts (charts.py): result files read and checked, their results
and measurements, the statistics a chart point takes from them (median, percentiles), the label
a point is named by, and the roofline chart's roofs and points."""
import json


SCHEMA = "gpubench/1"


class NotAResult(ValueError):
    """A file that cannot be read as a gpubench/1 result (the message names it)."""


class Result:
    """One result with its device name resolved against the devices of its own file."""

    def __init__(self, raw, device):
        self.benchmark = raw["benchmark"]
        self.params = raw.get("params", {})
        self.status = raw.get("status", "ok")
        self.device = device
        self.derived = raw.get("derived", {})
        self.measurements = {m["name"]: m for m in raw.get("measurements", [])}
        self.raw = raw


def read_document(path):
    """The parsed JSON of a result file; NotAResult when it is not one."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise NotAResult(f"{path}: cannot be read: {e.strerror}") from e
    except (ValueError, UnicodeDecodeError) as e:
        raise NotAResult(f"{path}: not a JSON file ({e})") from e
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise NotAResult(f"{path}: not a {SCHEMA} result file")
    return doc


class Collection:
    """The results of several files, with the GPUs, their peaks and the hosts they name."""

    def __init__(self, docs):
        self.docs = docs
        self.results, gpus, self.peaks, hosts = [], set(), {}, set()
        for doc in docs:
            devices = {d.get("id"): d for d in doc.get("devices", [])}
            hosts.add(doc.get("meta", {}).get("host", {}).get("cpu", "CPU"))
            for raw in doc.get("results", []):
                if raw.get("rank", 0) > 0:
                    continue  # a merged multi-GPU file: rank 0 stands for the job here
                dev = devices.get(raw.get("device", -1))
                if dev is not None:
                    gpus.add(dev["name"])
                    # Merge across files: any file that measured the D2D peak supplies it.
                    peak = self.peaks.setdefault(dev["name"],
                                                 {"theoretical": None, "measured": None})
                    peak["theoretical"] = peak["theoretical"] or dev.get("peak_bytes_per_s")
                    peak["measured"] = (peak["measured"]
                                        or dev.get("measured", {}).get("d2d_bytes_per_s"))
                self.results.append(Result(raw, dev["name"] if dev else None))
        self.gpus, self.hosts = sorted(gpus), sorted(hosts)

    def machine(self):
        return (", ".join(self.gpus) if self.gpus
                else "CPU only (" + ", ".join(self.hosts) + ")")

    def of(self, benchmark):
        return [r for r in self.results
                if r.benchmark == benchmark and r.status in ("ok", "failed")]


def median(m):
    return m.get("stats", {}).get("median") or 0.0


def rate(m, key):
    value = m.get("rates", {}).get(key)
    if value is None and key == "items_per_s" and median(m) > 0:
        value = m.get("items", 0) / median(m)
    return value


def raw_samples(m):
    samples = m.get("samples")
    return [t for t in samples if t and t > 0] if isinstance(samples, list) else []


def percentile(values, q):
    """Linear interpolation between the closest ranks, as numpy's default."""
    v = sorted(values)
    if not v:
        return None
    pos = (len(v) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def spread(m, work):
    """The rates (work / sample) of the 25th and 75th percentile samples: a longer sample is a
    lower rate, so the 75th percentile of the times gives the low end."""
    times = raw_samples(m)
    if not times or not work:
        return None
    return work / percentile(times, 0.75), work / percentile(times, 0.25)


def point(m, key, scale=1.0):
    """(value, low, high) of a measurement's rate `key`, divided by `scale`."""
    value = rate(m, key)
    if not value:
        return None
    work = m.get("bytes") if key == "bytes_per_s" else m.get("items")
    band = spread(m, work)
    lo, hi = band if band else (value, value)
    return value / scale, min(lo, value) / scale, max(hi, value) / scale


def says_something(series):
    """A chart of `series` (label -> x -> value) is worth drawing when some line has two points:
    a single point per series is a table row, not a chart."""
    return any(len(points) >= 2 for points in series.values())


def format_seconds(s):
    if s is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if abs(s) >= scale:
            return f"{s / scale:.4g} {unit}"
    return f"{s / 1e-9:.4g} ns"


def size_of(r):
    """The x of a sweep point: elements for vecadd and stream, batch for augment and pipeline."""
    return r.params.get("n") if r.benchmark in ("vecadd", "stream") else r.params.get("batch")


def point_label(r, name):
    """A measurement named for a reader: benchmark, the parameters that tell points apart, row."""
    keys = {"vecadd": ("n", "dtype", "kernel", "memory"), "stream": ("n", "dtype"),
            "augment": ("batch", "impl"), "pipeline": ("scenario", "batch", "mode"),
            "gemm": ("m", "n", "k", "dtype")}
    parts = [str(r.params[k]) for k in keys.get(r.benchmark, ()) if k in r.params]
    return f"{r.benchmark} {' '.join(parts)}: {name}"


def roofline_roofs(c):
    """{dtype: {"memory", "compute", "peak_bytes", "peak_flops"}} from the roofline results: the
    measured roofs (the highest bytes/s and FLOP/s of the type's points) and the theoretical
    ones each point recorded."""
    roofs = {}
    for r in c.of("roofline"):
        m = r.measurements.get("kernel")
        if not m or not median(m):
            continue
        x = roofs.setdefault(r.params.get("dtype", "?"),
                             {"memory": 0, "compute": 0, "peak_bytes": 0, "peak_flops": 0})
        x["memory"] = max(x["memory"], m.get("bytes", 0) / median(m))
        x["compute"] = max(x["compute"], m.get("flops", m.get("items", 0)) / median(m))
        for key, field in (("peak_bytes", "theoretical_bytes_per_s"),
                           ("peak_flops", "theoretical_flops_per_s")):
            v = r.derived.get(field)
            if isinstance(v, (int, float)):
                x[key] = max(x[key], v)
    return roofs


def roofline_points(c):
    """(label, intensity, FLOP/s) of every GPU row that declares its FLOPs, the roofline's own
    kernel rows left out (they draw the roofs)."""
    out = []
    for r in c.results:
        if r.benchmark == "roofline" or r.status not in ("ok", "failed"):
            continue
        for name, m in r.measurements.items():
            rates = m.get("rates", {})
            if m.get("clock") != "gpu" or "(" in name or not rates.get("arithmetic_intensity"):
                continue
            out.append((point_label(r, name), rates["arithmetic_intensity"],
                        rates.get("flops_per_s", 0)))
    return [p for p in out if p[2] > 0]
