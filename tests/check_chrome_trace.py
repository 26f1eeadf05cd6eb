#!/usr/bin/env python3
"""Checks a Chrome trace-event file written by `fabricsim run --trace`: valid JSON with
traceEvents; every slice has a track (pid, tid), a start and a length; on each track the
slices nest (each one either ends before the next starts or contains it); every track
with slices is named; counters have values; the file is under a size bound.

  check_chrome_trace.py TRACE.json [--max-mb N] [--expect-endpoints N] [--expect-links]
                                   [--expect-kinds compute,communication,steps]
Prints one line of counts; exits 1 on the first problem.
"""
import argparse
import collections
import json
import os
import sys


def fail(msg):
    print("check_chrome_trace: " + msg)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--max-mb", type=float, default=100)
    ap.add_argument("--expect-endpoints", type=int, default=0)
    ap.add_argument("--expect-links", action="store_true")
    ap.add_argument("--expect-kinds", default="")
    a = ap.parse_args()
    size_mb = os.path.getsize(a.trace) / 1e6
    if size_mb > a.max_mb:
        fail("%.1f MB, more than %.0f MB" % (size_mb, a.max_mb))
    with open(a.trace) as f:
        doc = json.load(f)
    events = doc.get("traceEvents")
    if not isinstance(events, list) or not events:
        fail("no traceEvents list")
    tracks = collections.defaultdict(list)
    names = {}
    counters = 0
    flows = {}  # id -> [start event, finish event]
    for e in events:
        ph = e.get("ph")
        if ph == "X":
            for k in ("pid", "tid", "ts", "dur", "name"):
                if k not in e:
                    fail("slice without %s: %r" % (k, e))
            if e["dur"] < 0 or e["ts"] < 0:
                fail("negative time: %r" % e)
            tracks[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"], e["name"]))
        elif ph == "C":
            counters += 1
            if not e.get("args") or not all(isinstance(v, (int, float)) for v in e["args"].values()):
                fail("counter without values: %r" % e)
        elif ph == "M":
            if e["name"] == "thread_name":
                names[(e["pid"], e["tid"])] = e["args"]["name"]
            elif e["name"] == "process_name":
                names[(e["pid"], None)] = e["args"]["name"]
        elif ph in ("s", "f"):
            # A flow arrow: its start and finish each bound to a slice on their track.
            for k in ("id", "pid", "tid", "ts"):
                if k not in e:
                    fail("flow event without %s: %r" % (k, e))
            pair = flows.setdefault(e["id"], [None, None])
            if pair[0 if ph == "s" else 1] is not None:
                fail("flow %r has two %s events" % (e["id"], ph))
            pair[0 if ph == "s" else 1] = e
        else:
            fail("unexpected phase %r" % ph)
    for fid, (start, finish) in flows.items():
        if start is None or finish is None:
            fail("flow %r has no %s" % (fid, "start" if start is None else "finish"))
        if finish["ts"] < start["ts"]:
            fail("flow %r ends before it starts" % fid)
        for ev in (start, finish):
            track = tracks.get((ev["pid"], ev["tid"]), [])
            if not any(b - 1e-6 <= ev["ts"] <= en + 1e-6 for b, en, _ in track):
                fail("flow %r's %s at %f lies on no slice of its track" % (fid, ev["ph"], ev["ts"]))
    slices = 0
    for track, items in tracks.items():
        if track not in names or (track[0], None) not in names:
            fail("track %r has slices but no name" % (track,))
        items.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        eps = 1e-6  # one picosecond in microseconds
        for begin, end, name in items:
            while stack and stack[-1][1] <= begin + eps:
                stack.pop()
            if stack and end > stack[-1][1] + eps:
                fail("on track %s (%s) %r [%f, %f] crosses %r [%f, %f]" %
                     (track, names[track], name, begin, end, stack[-1][2], stack[-1][0], stack[-1][1]))
            stack.append((begin, end, name))
        slices += len(items)
    endpoints = {p for (p, t) in tracks if p >= 10}
    if len(endpoints) < a.expect_endpoints:
        fail("%d endpoints with slices, expected %d" % (len(endpoints), a.expect_endpoints))
    if a.expect_links and not any(p == 1 for (p, t) in tracks):
        fail("no link busy periods")
    for kind in filter(None, a.expect_kinds.split(",")):
        if not any(names.get(t, "").startswith(kind) for t in tracks):
            fail("no %s track" % kind)
    print("check_chrome_trace: %.1f MB, %d slices on %d tracks, %d counter values, %d endpoints, %d flow arrows; nesting ok"
          % (size_mb, slices, len(tracks), counters, len(endpoints), len(flows)))


main()
