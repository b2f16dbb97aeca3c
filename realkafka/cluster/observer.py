"""The observer role of a real cluster (docs/realkafka.md, "Roles" and "Observation"): the controller's image from
its metadata log, each broker's dirs and replica logs, the topics as the brokers describe them, and the waits on
them; the names of the dirs, replaced ones included."""
from __future__ import annotations

import base64
import os
import time
from pathlib import Path
from typing import Callable

from .errors import HarnessError
from .node import METADATA_PARTITION, PARTITION_DIR, read_properties
from .observation import (BrokerObservation, ClusterObservation, ControllerImage, Dir, DirNames, ImageBuilder,
                          MetadataRecord, Replica)
from .probe import ProbeError


class ClusterObserver:
    """Views of the cluster (``observe``) and waits on them (``wait_until``)."""

    def metadata_records(self) -> list[MetadataRecord]:
        """The controller's metadata log, decoded by Kafka's MetadataRecordSerde (control records left out)."""
        path = self.controller.metadata_dir / METADATA_PARTITION
        if not path.is_dir():
            return []
        return [MetadataRecord(r["offset"], r["type"], r.get("data") or {})
                for r in self._call("readMetadata", path=str(path)) if not r.get("control")]

    def observe(self, *, topics: list[str] | None = None, light: bool = False) -> ClusterObservation:
        """The cluster now. ``light``: the controller's image, processes and (for brokers that are up) their dirs'
        online-ness only, without reading replica logs or describing topics (for waits)."""
        controller, records = self._controller_view()
        described = self._describe_log_dirs([b for b, n in self.brokers.items() if n.up], controller)
        brokers = {b: self._observe_broker(b, described.get(b), light) for b in self.brokers}
        topic_names = topics if topics is not None else sorted({t for t, _ in controller.partitions})
        topic_view = {}
        if not light and topic_names and not self.controller.held:
            try:
                topic_view = self.describe_topics(topic_names, timeout=15)
            except ProbeError:
                topic_view = {}
        return self.OBSERVATION(brokers=brokers, controller=controller, records=tuple(records), topics=topic_view)

    def _controller_view(self) -> tuple:
        """(the controller's image, the metadata records but NoOpRecords) from its metadata log."""
        self._learn_replaced_ids()
        builder = ImageBuilder(self.names)
        records = []
        for r in self.metadata_records():
            builder.replay(r)
            if r.type != "NoOpRecord":
                records.append(r)
        return builder.image(up=self.controller.up, held=self.controller.held), records

    def _describe_log_dirs(self, up: list[int], controller: ControllerImage) -> dict:
        """describeLogDirs of each running broker that the cluster's metadata can reach (a broker never
        registered, or fenced since it started, is not in the Admin client's metadata); {} per failure."""
        asked = [b for b in up if b in controller.registrations]
        if not asked:
            return {}
        try:
            result = self._call("describeLogDirs", 20, brokers=asked)
        except (ProbeError, HarnessError) as e:
            if isinstance(e, HarnessError) and self.probe is not None and self.probe.proc.poll() is not None:
                raise
            result = {}
            for b in asked:      # one at a time: a broker that cannot answer does not hide the others
                try:
                    result.update(self._call("describeLogDirs", 10, brokers=[b]))
                except ProbeError:
                    pass
        return {int(b): dirs for b, dirs in result.items()}

    def _observe_broker(self, b: int, described: dict | None, light: bool) -> BrokerObservation:
        node = self.brokers[b]
        by_path = {str(Path(p).resolve()): v for p, v in (described or {}).items()}
        dirs = []
        replicas: dict[tuple[str, int], dict] = {}
        paths_to_read = {}
        for d, path in enumerate(node.dirs):
            props_path = path / "meta.properties"
            dir_id = next((u for u, bd in self.dir_ids.items() if bd == (b, d)), "")
            info = by_path.get(str(path.resolve())) if path.is_dir() else by_path.get(str(path))
            online = None if info is None else info["error"] is None
            dirs.append(Dir(index=d, path=str(path), id=dir_id, exists=path.is_dir(), online=online,
                            configured=d not in node.removed))
            if not path.is_dir() or not props_path.exists() or d in node.removed:
                continue
            for entry in sorted(os.listdir(path)):
                m = PARTITION_DIR.match(entry)
                if not m or not (path / entry).is_dir():
                    continue
                key = (m.group("topic"), int(m.group("partition")))
                if m.group("kind") in ("delete", "stray"):
                    continue
                slot = replicas.setdefault(key, {"dir": None, "future": None})
                if m.group("kind") == "future":
                    slot["future"] = d
                else:
                    slot["dir"] = d
                    paths_to_read[key] = path / entry
        logs = {}
        if not light and paths_to_read:
            logs = self._call("readLogs", paths=[str(p) for p in paths_to_read.values()])
        out = {}
        for key, slot in replicas.items():
            path = paths_to_read.get(key)
            records, leo = (), None
            if path is not None and str(path) in logs:
                rs = logs[str(path)]
                records = tuple((r["offset"], None if r.get("value") is None else base64.b64decode(r["value"]))
                                for r in rs if not r.get("control"))
                bases = [int(f.stem) for f in path.glob("*.log") if f.stem.isdigit()]
                leo = max(rs[-1]["offset"] + 1 if rs else 0, max(bases, default=0))
            out[key] = Replica(dir=slot["dir"], future_dir=slot["future"], log_end_offset=leo, records=records)
        return BrokerObservation(id=b, up=node.up, dirs=tuple(dirs), replicas=out, described=described is not None)

    def wait_until(self, predicate: Callable[[ClusterObservation], bool], *, timeout: float = 60, what: str,
                   interval: float = 0.5, light: bool = False) -> ClusterObservation:
        """Observe until ``predicate`` holds; a HarnessError that names what was awaited and the last observation
        when it does not within ``timeout`` seconds, or when a process of the cluster died unasked."""
        deadline = time.monotonic() + timeout
        last, error = None, None
        while True:
            try:
                last, error = self.observe(light=light), None
                if predicate(last):
                    return last
            except ProbeError as e:
                error = str(e)             # the cluster is between states (a topic not yet known): look again
            dead = [line for n in [self.controller, *self.brokers.values()] if (line := n.died())]
            if dead:
                raise HarnessError(f"while waiting for {what}: {'; '.join(dead)}")
            if time.monotonic() >= deadline:
                seen = last.summary() if last is not None else "nothing observed"
                if error:
                    seen += f" (then the probe said: {error})"
                raise HarnessError(f"timed out after {timeout:.0f} s waiting for {what}; last observation: {seen}")
            time.sleep(interval)


    def _learn_replaced_ids(self) -> None:
        """The new directory.id Kafka wrote into a replaced dir, once it did (see replace_dir)."""
        for b, d in sorted(self._replaced):
            props = self.dir_path(b, d) / "meta.properties"
            new = read_properties(props).get("directory.id") if props.exists() else None
            if not new or new in self.dir_ids:
                continue
            for u, named in list(self.dir_ids.items()):
                if named == (b, d):
                    self.dir_ids[u] = f"dir {d} of broker {b} before its replacement"
            self.dir_ids[new] = (b, d)
            self.names = DirNames(self.dir_ids)
            self._replaced.discard((b, d))
