"""KRaft mode's designs (issue 31): ``kraft``, Kafka's behaviour (3.7 to 4.4, by the release option ``kafka``:
model/kraft/release.py) over the storage layer and its data path, with Eligible Leader Replicas (``kraft-elr``,
model/kraft/elr.py) where the release has them on, with intra-broker moves (``kraft-future``, model/kraft/future.py) and KIP-928's saturation (storage's
``saturation`` with ``kraft-saturation``, model/kraft/saturation.py) when a configuration asks for them."""
from __future__ import annotations

from model.kraft.deletion import KRAFT_DELETION
from model.kraft.elr import ELR
from model.kraft.future import FUTURE
from model.kraft.migration import MV_UPGRADE
from model.kraft.reassignment import KRAFT_REASSIGNMENT
from model.kraft.rules import KRAFT
from model.kraft.saturation import KRAFT_SATURATION
from model.kraft.sessions import SESSIONS
from model.kraft.shutdown import SHUTDOWN
from model.spec.feature import Design
from model.storage.rules_data import DATA
from model.storage.rules_space import SATURATION

KRAFT_DESIGN = Design("kraft", "KRaft JBOD (KIP-858) as Kafka 3.7 to 4.4 implement it (--kafka): the controller's metadata log, "
                      "brokers replaying it, the three-gate create-or-not decision, AssignReplicasToDirs",
                      (KRAFT, DATA, ELR, MV_UPGRADE, SESSIONS, FUTURE, SHUTDOWN, KRAFT_DELETION, KRAFT_REASSIGNMENT,
                       SATURATION, KRAFT_SATURATION))

DESIGNS = {KRAFT_DESIGN.name: KRAFT_DESIGN}
VARIANTS = tuple(DESIGNS)
