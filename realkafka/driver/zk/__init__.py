"""The ZooKeeper-mode model (model/zk/, ``--variant kip112``) on a real ZooKeeper-mode cluster of Kafka 3.x
(realkafka/cluster/zk.py): how each rule is driven or awaited (mapping.py), what is seen on both sides (view.py),
and a run judged by trace validation over the model's own rules (run.py; docs/reproduce-zk.md)."""
