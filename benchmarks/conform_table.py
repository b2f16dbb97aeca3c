"""The campaign table of docs/conform.md from `jbodcheck conform --json` reports: per campaign its outcomes, then per
rule and release how often it was driven and observed and how often the real cluster agreed, then per preset of the
campaigns' mode (KRaft, or ZooKeeper mode's kip112 presets) which of the rules its `ok` verdict stands on a real
cluster has agreed with (issue 45, item 5). ZooKeeper-mode reports (docs/reproduce-zk.md, "Campaigns") are told by
their seed and counted against ZooKeeper mode's rules (realkafka/driver/zk/mapping.py), 10 times each (issue 47).

    python3 benchmarks/conform_table.py REPORT.json ...
"""
from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict

from realkafka.cluster import Cluster
from realkafka.driver.mapping import NOT_REPRODUCIBLE, RULES
from realkafka.driver.zk.mapping import RULES as ZK_RULES


def main(paths: list[str]) -> None:
    reports = [json.load(open(p)) for p in paths]
    print("| campaign | Kafka | mode | traces | matched | conforms | disagrees | refused | harness | median s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in reports:
        o = r["outcomes"]
        times = sorted(t["elapsed_s"] for t in r["traces"] if t["outcome"] in ("matched", "conforms"))
        median = times[len(times) // 2] if times else "-"
        timers = " (Kafka timers)" if r.get("settings", {}).get("broker.session.timeout.ms") == "9000" else ""
        if r.get("controller") == "zookeeper":
            timers = f" (ZooKeeper mode, seed {r['seed']})"
        print(f"| {r['preset']}{timers} | {', '.join(r['kafka'])} | {r.get('mode', 'model')} | {len(r['traces'])} | "
              f"{o['matched']} | {o['conforms']} | {o['disagrees']} | {o['refused']} | {o['harness']} | {median} |")
    traces = [t for r in reports for t in r["traces"]]
    kinds = Counter(t.get("kind", "model") for t in traces)
    print(f"\n{len(traces)} traces: {kinds['model']} model -> real, {kinds['real']} real -> model; by release: "
          + ", ".join(f"{k} {v}" for k, v in sorted(Counter(t["kafka"] for t in traces).items())) + ".")
    rules: dict = defaultdict(lambda: defaultdict(Counter))
    for r in reports:
        for rule, by in r["rules"].items():
            for release, counts in by.items():
                rules[rule][release].update(counts)
    releases = sorted({rel for by in rules.values() for rel in by})
    print()
    zookeeper = {r.get("controller") for r in reports} == {"zookeeper"}
    table = ZK_RULES if zookeeper else RULES      # a ZooKeeper-mode campaign's rules: realkafka/driver/zk/mapping.py
    low_at = 10 if zookeeper else 20              # issue 47 asks 10 per ZooKeeper-mode rule
    print("| rule | how | " + " | ".join(f"{rel} driven (agreed) | {rel} observed (agreed)" for rel in releases)
          + f" | below {low_at} at a release: why |")
    print("|---|---|" + "---|---|" * len(releases) + "---|")
    for rule, h in sorted(table.items()):
        cells = []
        low = False
        for rel in releases:
            c = rules[rule][rel]
            cells.append(f"{c['driven']} ({c['driven_agreed']})")
            cells.append(f"{c['observed']} ({c['observed_agreed']})")
            low |= c["driven"] + c["observed"] < low_at
        why = ZK_WHY.get(rule) or _why(h) if zookeeper else _why(h, rule)   # (WHY_LOW is KRaft's)
        print(f"| `{rule}` | {h.how} | " + " | ".join(cells) + f" | {why if low else ''} |")
    print()
    preset_standing(rules, releases, variant="kip112" if zookeeper else "kraft", often=low_at)


def preset_standing(rules: dict, releases: list[str], *, variant: str = "kraft", often: int = 20) -> None:
    """Per preset of ``variant``: the rules of its configuration (a non-empty domain), how many a real cluster agreed
    with at least once and at least ``often`` times at each release, and the rules no real cluster agreed with at a
    release."""
    from explorer.catalog import PRESETS, build_model, preset_config

    print("| preset | rules | " + " | ".join(f"{rel}: agreed ({often} or more)" for rel in releases)
          + " | not agreed at every release |")
    print("|---|---|" + "---|" * len(releases) + "---|")
    for name in PRESETS:
        cfg = preset_config(name)
        if cfg.variant != variant:
            continue
        model = build_model(cfg)
        names = sorted(r.name for r in model.rules if r.domain(model))
        agreed = {rel: {n: rules[n][rel]["driven_agreed"] + rules[n][rel]["observed_agreed"] for n in names}
                  for rel in releases}
        cells = [f"{sum(1 for v in agreed[rel].values() if v)} ({sum(1 for v in agreed[rel].values() if v >= often)})"
                 for rel in releases]
        missing = sorted(n for n in names if any(not agreed[rel][n] for rel in releases))
        print(f"| {name} | {len(names)} | " + " | ".join(cells) + " | "
              + (", ".join(f"`{n}`" for n in missing) or "none") + " |")


# Why a KRaft rule stays below the bar in the campaigns, where the reason is not the number of traces.
WHY_LOW = {
    "LeaderShrinkIsr": "a walk never chooses it: the harness orders a leader's shrink of a follower by holding the "
                       "follower's fetches from a trace's start, which only a scenario does (finding 1's traces, "
                       "reproduce.md); the tracker takes a lagging follower's shrink as a timed step, not counted here",
    "ControllerExpireSession": "a walk never chooses it: the harness orders an expiry by holding the broker's "
                               "heartbeats from a trace's start, which only a scenario does (finding 5's expired-"
                               "session route, reproduce.md: reproduced, matched at 3.9.2 and 4.4.0); the tracker "
                               "takes an expiry as a timed step, not counted here",
    "BrokerDirFailureTimeout": "the campaigns' clusters set log.dir.failure.timeout.ms beyond the run (the harness's "
                               "setting, printed in every verdict); --kafka-defaults keeps Kafka's 30 s",
    "BrokerHeartbeatControlledShutdown": "taken only when the shutting broker still leads a partition (or an "
                                         "active broker has not replayed its shutdown offset): a walk's broker "
                                         "often leads none by then, and one answer grants the shutdown "
                                         "(BrokerHeartbeatShutdownNow)",
    "ReplaceDisk": "at most once per trace (a repair needs a failed dir first, the presets allow one repair), and "
                   "only in the presets with repairs (kraft-tiny-faults, kraft-mv-upgrade)",
    "RemoveDirFromConfig": "at most once per trace (a repair needs a failed dir first, the presets allow one "
                           "repair), and only in the presets with repairs (kraft-tiny-faults, kraft-mv-upgrade)",
    "UpgradeMetadataVersion": "at most once per trace, and only in kraft-mv-upgrade (a cluster formatted at "
                              "3.6-IV2)",
    "ReplicaCatchUp": "a reassignment's catch-up is this one step only without records; the model a real cluster "
                      "is judged by has the data path on (at least one record: reproduce.md), where it has no "
                      "action and the added replica fetches (ReplicaFetch)",
}


# ZooKeeper-mode rules no generated trace lists, and why (docs/reproduce-zk.md, "The campaign of 2026-12-07 at 3.9.2").
ZK_WHY = {
    "BrokerUpdateMetadata": "the campaign's model runs eager_metadata (docs/model.md, 2.2): an UpdateMetadata at the "
                            "head of an inbox is applied within the step that put it there, so the rule is never "
                            "enabled",
    "LeaderShrinkIsr": "a generated trace takes the cluster's own steps in action order, ReplicaFetch before it, so "
                       "a follower that can fetch does; only a hold of its fetches orders it, and ZooKeeper mode has "
                       "no holds (docs/reproduce-zk.md, \"Controller failover, holds\")",
}


def _why(h, rule: str = "") -> str:
    if rule in WHY_LOW:
        return WHY_LOW[rule]
    if h.how == NOT_REPRODUCIBLE:
        return "not reproducible: " + h.says
    if getattr(h, "needs", None) is not None and h.needs not in Cluster.capabilities:
        return f"the harness has no capability {h.needs}"
    return "not yet often enough in the campaigns run (their presets' bounds and the traces' number)"


if __name__ == "__main__":
    main(sys.argv[1:])
