"""The suite's long runs: run in the ``thorough`` profile only (JBODCHECK_PROFILE=thorough, docs/testing.md).

The README's test command must stay under 15 minutes on 2 cores; these tests are exhaustive searches, whole-space
conformance runs and repeated Spark JVM starts whose ground a faster test of the default profile also covers (named
in ``ci_cover``). Their last results are recorded in docs/testing.md, "Long runs" (tests/docs/test_docs.py checks that
every entry is listed there). conftest.py skips them outside the thorough profile and fails the run when an entry
names no test of a collected file, so a renamed test cannot fall out of both profiles silently.
"""
from __future__ import annotations

from typing import NamedTuple


class LongRun(NamedTuple):
    test: str        # node id: tests/FILE.py::FUNCTION, or with [PARAMS] for one parametrization only
    what: str        # what it checks
    ci_cover: str    # what of it the default profile still checks


LONG_RUNS = (
    LongRun("tests/kraft/test_kraft.py::test_kraft_tiny_exhausts_with_every_rule_of_its_configuration_fired_and_holds",
            "kraft-tiny at 3.9 exhausted (781,830 states), every rule of its configuration fired, no violation",
            "kraft-future exhausted by the invariant suite; kraft-tiny's shortest traces (tests/kraft/test_kraft.py)"),
    LongRun("tests/kraft/test_kraft.py::test_kraft_tiny_faults_exhausts_with_every_rule_of_its_configuration_fired_and_"
            "finds_the_recreation",
            "kraft-tiny-faults exhausted: every rule fired, only no_recreate_over_offline_copy violated",
            "finding 1's seven-step shortest trace on kraft-tiny-faults (tests/kraft/test_kraft.py)"),
    LongRun("tests/kraft/test_kraft_bugs.py::test_kraft_mv_upgrade_exhausts_with_every_rule_of_its_configuration_fired",
            "kraft-mv-upgrade exhausted: only kraft_directories_match_actual_dir violated (finding 7), every rule fired",
            "finding 7's 12-step trace on kraft-mv-upgrade (tests/kraft/test_kraft_findings.py) and the MV upgrade's rule tests"),
    LongRun("tests/kraft/test_kraft_bugs.py::test_the_leadership_invariant_holds_on_kraft_tiny_too",
            "kraft_leadership_as_leader_acceptor_allows holds on the whole of kraft-tiny-faults",
            "its breaking cases on hand-made states (tests/kraft/test_kraft_bugs.py)"),
    LongRun("tests/kraft/test_kraft_deletion.py::test_kraft_deletion_exhausts_with_every_rule_of_its_configuration_fired",
            "kraft-deletion exhausted: every rule fired, findings 1 and 5's invariants violated, no other",
            "the deletion rules' own tests and kraft-deletion with each other feature (test_kraft_combinations.py)"),
    LongRun("tests/kraft/test_kraft_deletion.py::test_kraft_assignments_drain_holds_on_kraft_deletion",
            "kraft_assignments_drain (liveness) holds on the whole of kraft-deletion",
            "the liveness checker's own tests (tests/engines/test_liveness.py)"),
    LongRun("tests/kraft/test_kraft_deletion.py::test_kraft_assignments_drain_fails_with_kafka_17190",
            "kraft_assignments_drain fails on kraft-deletion with --bug KAFKA-17190",
            "KAFKA-17190's scenario resends the deleted topic's assignment forever with the switch and drains without "
            "it (tests/kraft/test_kraft_deletion.py)"),
    LongRun("tests/kraft/test_kraft_saturation.py::test_kraft_saturation_exhausts_ok_with_every_rule_of_its_configuration_"
            "fired",
            "kraft-saturation exhausted: no violation, every rule fired",
            "the saturation rules' footprints on sampled states and kraft-saturation with each other feature"),
    LongRun("tests/kraft/test_kraft_sessions.py::test_kraft_heartbeat_fires_every_rule_and_finds_the_recreation_without_"
            "a_crash",
            "kraft-heartbeat searched to finding 1 without a crash, every rule fired",
            "finding 5's traces (tests/kraft/test_kraft_findings.py) and the session rules' own tests (tests/kraft/test_kraft_sessions.py)"),
    LongRun("tests/kraft/test_kraft_reassignment.py::test_reassignment_presets_fire_every_rule_and_find_the_unlisted_"
            "added_replica[kraft-reassignment-move]",
            "kraft-reassignment-move: every rule fired, finding 6 found",
            "the same on kraft-reassignment (the other parametrization)"),
    LongRun("tests/kraft/test_kraft_reassignment.py::test_a_move_with_records_exhausts_and_finds_finding_6_and_no_record_lost",
            "kraft-reassignment-move with one record at 3.9 exhausted (180,352 states): every rule but LeaderShrinkIsr "
            "fired, finding 6 and its consequences the only violations",
            "a restarted follower rejoins the ISR with records, its scenario, and the fetch's footprint on its "
            "states (tests/kraft/test_kraft_reassignment.py)"),
    LongRun("tests/kraft/test_kraft_combinations.py::test_reassignment_with_records_explores_with_each_other_feature",
            "reassignment with records beside each other KRaft feature (30,000 states each): both features' rules "
            "and ReplicaFetch fire, every violation replays",
            "reassignment without records beside each other feature (test_two_kraft_features_explore_together)"),
    LongRun("tests/proofs/test_proofs.py::test_every_transition_of_tiny_conforms_both_ways_and_every_property_agrees_with_"
            "its_invariant",
            "the z3 model's conformance on every state and transition of tiny (87,862 / 262,050), both ways",
            "the same check on tiny's first 2,000 states, breadth-first, through prove (test_cli_prove_exit_codes_"
            "output_and_json)"),
    LongRun("tests/cli/test_compare.py::test_compare_regenerates_the_zookeeper_kraft_section_in_the_docs",
            "compare's ZooKeeper/KRaft section regenerated and equal to docs/designs.md's",
            "the rows of the quick designs regenerated (tests/cli/test_compare.py)"),
    LongRun("tests/engines/test_spark.py::test_all_violations_exhausts_with_bfs_counts",
            "the Spark engine with --all-violations exhausts with BFS's counts",
            "Spark's counts equal BFS's on tiny (test_tiny_counts_equal_bfs)"),
    LongRun("tests/engines/test_spark.py::test_small_bounded_counts_equal_bfs",
            "the Spark engine's bounded counts on small equal BFS's",
            "Spark's counts equal BFS's on tiny and on small KRaft (test_kraft_engines.py)"),
    LongRun("tests/engines/test_spark.py::test_tiny_counts_equal_bfs_up_to_dir_symmetry",
            "the Spark engine with the dir symmetry has BFS's counts on tiny",
            "Spark's counts on tiny without the symmetry; the symmetry's own tests"),
    LongRun("tests/engines/test_spark_cluster.py::test_cluster_run_has_bfs_counts",
            "a standalone Spark master and worker on 127.0.0.1 give BFS's counts",
            "Spark on local[2] (tests/engines/test_spark.py)"),
    LongRun("tests/engines/test_signals.py::test_spark_through_the_cli_exits_128_plus_the_signal_with_a_report[search-end:15]",
            "SIGTERM at the end of a Spark search: exit 143 with a report",
            "the same at the Spark engine's start and while a job runs (the other parametrizations)"),
    LongRun("tests/engines/test_signals.py::test_the_jvm_does_not_outlive_jbodcheck[None]",
            "no JVM outlives a Spark run that ends normally",
            "no JVM outlives one stopped at a level's end (the [level-done#2:2] parametrization)"),
    LongRun("tests/engines/test_signals.py::test_the_jvm_does_not_outlive_jbodcheck[job-running#3:15]",
            "no JVM outlives a Spark run stopped while a job runs",
            "no JVM outlives one stopped at a level's end (the [level-done#2:2] parametrization)"),
    LongRun("tests/engines/test_engine_core.py::test_spark_stops_on_a_signal_with_the_last_complete_level[15-143]",
            "the Spark engine stops on SIGTERM with the last complete level (SIGINT's case was already thorough)",
            "the same through the CLI (tests/engines/test_signals.py)"),
    LongRun("tests/kernel/test_feature_example.py::test_spark_explores_the_example_feature",
            "the Spark engine explores the documented example feature with BFS's counts",
            "BFS, DFS and fuzz on the example feature (tests/kernel/test_feature_example.py)"),
    LongRun("tests/engines/test_search.py::test_all_violations_reports_each_invariant_once",
            "--all-violations on the whole of tiny under legacy reports each violated invariant once",
            "the invariant suite's exhaustive runs with all_violations, each violated invariant once"),
    LongRun("tests/engines/test_search.py::test_selected_invariants_only_are_reported",
            "a search with selected invariants on the whole of tiny reports only those",
            "--invariant on the command line (tests/cli/test_cli.py) and the invariant suite's per-invariant items"),
    LongRun("tests/storage/test_durability.py::test_kip112_tiny_is_ok_with_every_invariant_and_every_rule_fires",
            "tiny under kip112 exhausted with every invariant, every rule fired",
            "the invariant suite's test_preset_outcome[tiny-kip112] (the same search)"),
    LongRun("tests/proofs/test_proofs.py::test_prove_without_the_check_fails_with_a_cti_and_a_real_bmc_path[legacy]",
            "prove under legacy fails with a CTI and a BMC path",
            "the same under kip112-no-isnew-check, of which legacy is an alias (tests/zk/test_designs.py)"),
    LongRun("tests/kraft/test_kraft_reassignment.py::test_kraft_assignments_drain_fails_with_kafka_16886_on_the_move",
            "kraft_assignments_drain (liveness) fails on kraft-reassignment-move with --bug KAFKA-16886",
            "KAFKA-16886's scenario resends the removed replica's assignment forever with the switch and drains "
            "without it (tests/kraft/test_kraft_reassignment.py)"),
    LongRun("tests/kraft/test_kraft_fidelity.py::test_no_reachable_state_holds_lost[reassignment-move]",
            "no reachable state of kraft-reassignment-move holds LOST",
            "the same on kraft-mv-upgrade, kraft-tiny with one fault and kraft-future"),
    LongRun("tests/engines/test_parallel.py::test_max_memory_stops_a_search_under_way[1]",
            "--max-memory stops a one-worker search under way",
            "the same with two workers ([2])"),
    LongRun("tests/cli/test_compare.py::test_every_violated_cell_of_the_zookeeper_kraft_section_replays",
            "every violated cell of compare's ZooKeeper/KRaft section replays to the same violation",
            "the quick designs' and fixes' sections' violated cells replay (test_compare.py, test_fixes.py)"),
    LongRun("tests/cli/test_compare.py::test_compare_regenerates_the_rows_of_the_quick_designs_in_the_docs",
            "compare regenerates docs/designs.md's rows of the quick designs (five designs on tiny) exactly",
            "compare's table format, refusals and partial table on a signal (test_compare.py, test_signals.py)"),
    LongRun("tests/cli/test_compare.py::test_every_violated_cell_of_the_quick_designs_replays",
            "every violated cell of the quick designs' rows replays to the same violation",
            "the scenarios saved by explore replay to the same violation (tests/cli/test_traces.py)"),
    LongRun("tests/proofs/test_proofs_kraft.py::test_every_configuration_of_the_default_profile_conforms_and_every_property_"
            "agrees_with_its_invariant",
            "every configuration of the KRaft conformance's default profile conforms, both ways, each as far as "
            "the list bounds it (three-brokers and one-record-one-fault: their first states; the others whole)",
            "prove --variant kraft's conformance of the default profile bounded to 50 states a configuration, and the "
            "drifts the default profile must catch (tests/proofs/test_proofs_kraft.py)"),
    LongRun("tests/kraft/test_kraft_shutdown.py::test_the_feature_rules_stay_within_their_declared_footprints",
            "kraft-shutdown's rules stay within their declared footprints on sampled states",
            "the core KRaft rules' footprints (tests/kraft/test_kraft_por.py) and kraft-shutdown's rule tests"),
    LongRun("tests/engines/test_spark_conf.py::test_the_docs_recommendation_works_outside_spark_submit",
            "docs/spark.md's recommended configuration runs outside spark-submit",
            "the Spark configuration's own checks (tests/engines/test_spark_conf.py)"),
    LongRun("tests/proofs/test_proofs.py::test_bmc_finds_no_violation_under_kip112_and_the_cli_reports_depths",
            "prove --bmc finds no violation under kip112, and the CLI reports the depths",
            "BMC finds the first violation at BFS's depth on tiny and small (tests/proofs/test_proofs.py)"),
    LongRun("tests/kraft/test_kraft_engines.py::test_spark_gives_bfs_exact_counts_on_small_kraft",
            "the Spark engine gives BFS's exact counts on a small KRaft cluster",
            "Spark's counts equal BFS's on tiny (tests/engines/test_spark.py)"),
    LongRun("tests/cli/test_traces.py::test_explore_save_scenario_replays_to_the_same_violation[dfs]",
            "a scenario DFS saved replays to the same violation",
            "the same with BFS ([bfs])"),
    LongRun("tests/zk/test_invariant_suite.py::test_preset_outcome[medium-kip112-draft]",
            "the KIP-112 draft's first violation on medium is an expected one",
            "the same on small ([small-kip112-draft])"),
    LongRun("tests/kraft/test_kraft_por.py::test_kraft_rules_stay_within_their_declared_footprints[kraft-tiny-faults]",
            "the KRaft rules stay within their declared footprints on kraft-tiny-faults' sampled states",
            "the same on kraft-tiny ([kraft-tiny])"),
    LongRun("tests/engines/test_signals.py::test_spark_through_the_cli_exits_128_plus_the_signal_with_a_report[job-running#3:15]",
            "SIGTERM while a Spark job runs: exit 143 with a report",
            "the same at the Spark engine's start ([spark-start:2])"),
    LongRun("tests/realkafka/test_realkafka.py::test_a_cluster_formatted_before_directory_assignment_upgrades_its_metadata_"
            "version",
            "a real cluster formatted at metadata.version 3.6-IV2 upgraded by updateFeatures: its broker registers its dir",
            "the mv-upgrade mapping and the metadata.version of a model with mv_upgrade (tests/realkafka/test_reproduce.py)"),
    LongRun("tests/realkafka/test_realkafka.py::test_a_failed_dir_replaced_or_removed_while_its_broker_is_down",
            "a real failed dir replaced by a formatted new disk (a new directory.id) and another removed from log.dirs",
            "ReplaceDisk's and RemoveDirFromConfig's mapping and the scripted cluster's removed dirs (tests/realkafka/test_reproduce.py)"),
    LongRun("tests/realkafka/test_reproduce_real.py::test_a_broker_killed_from_outside_mid_run_is_a_harness_failure_exit_3",
            "a broker SIGKILLed from outside mid-reproduce on a real cluster: exit 3 naming it, nothing left",
            "the driver's dead-node check and exit 3 against a scripted cluster (tests/realkafka/test_trace_validation.py)"),
    LongRun("tests/realkafka/test_conform_real.py::test_a_short_campaign_on_a_real_cluster_stays_a_behaviour_of_the_model",
            "a two-trace conform campaign (one model -> real, one real -> model) of kraft-tiny-faults on a real cluster",
            "campaigns against a scripted cluster (tests/realkafka/test_conform.py); the campaigns' last results are in "
            "docs/conform.md"),
    LongRun("tests/realkafka/test_reproduce_real.py::test_finding_1_reproduces_on_a_real_cluster",
            "reproduce runs finding 1's scenario on a real cluster and matches the model at every step",
            "reproduce against a scripted cluster (tests/realkafka/test_reproduce.py) and a real 2x2 cluster's dir failure "
            "(tests/realkafka/test_realkafka.py); every reproduction's last result is in docs/reproduce.md"),
    LongRun("tests/kraft/test_kraft_reassignment.py::test_reassignment_presets_fire_every_rule_and_find_the_unlisted_"
            "added_replica[kraft-reassignment]",
            "kraft-reassignment: every rule fired, finding 6 found",
            "finding 6's 10-step trace on kraft-reassignment (tests/kraft/test_kraft_findings.py)"),
    LongRun("tests/zk/test_invariant_suite.py::test_preset_outcome[small-unclean]",
            "unclean election's first violation on small is an expected one",
            "the same on tiny ([tiny-unclean])"),
    LongRun("tests/proofs/test_proof_mutations.py::test_m15_recreation_over_an_offline_copy_encoded_as_true[kip112-no-isnew-"
            "check]",
            "a z3 property encoded as true is caught under kip112-no-isnew-check",
            "the same under kip112 ([kip112])"),
    LongRun("tests/engines/test_spark.py::test_legacy_violation_has_a_shortest_trace_that_replays[dir-symmetry]",
            "the Spark engine's legacy trace with the dir symmetry is shortest and replays",
            "the same without the symmetry ([plain])"),
    LongRun("tests/engines/test_plugins.py::test_every_engine_reports_a_plugin_invariant",
            "BFS, the Hypothesis machine and the invariant suite (a pytest run of its own) report a plugin's invariant",
            "explore reports a plugin's invariant given by --plugin module, --plugin file and JBODCHECK_PLUGINS"),
    LongRun("tests/docs/test_findings.py::test_finding_8s_completion_path_under_kafka_2_7_takes_16_steps",
            "finding 8's completion path under Kafka 2.7's reassignment takes 16 steps",
            "finding 8's own test (tests/zk/test_reassignment.py)"),
    LongRun("tests/kernel/test_feature_example.py::test_fuzz_and_replay_take_the_feature",
            "fuzz and replay take the documented example feature",
            "BFS, DFS and the CLI on the example feature (tests/kernel/test_feature_example.py)"),
    LongRun("tests/kraft/test_kraft_render.py::test_whatever_view_accepts_of_a_kraft_report_renders",
            "every KRaft report view accepts (Hypothesis) renders",
            "every field of a KRaft report replaced by a value of every JSON kind renders or is refused "
            "(tests/cli/test_hostile_input.py)"),
    LongRun("tests/engines/test_fuzz.py::test_kip112_passes_within_the_default_budget",
            "fuzz's default budget finds nothing under kip112",
            "fuzz's default budget catches legacy, and its trace replays (tests/engines/test_fuzz.py)"),
    LongRun("tests/proofs/test_proofs_kraft.py::test_cli_prove_kraft_exit_codes_and_json",
            "prove --variant kraft: exit 0 proved with its JSON report, exit 1 not proved, exit 2 for bad input",
            "prove --variant kraft on a planted bug (exit 1, its JSON report) and on the model options' "
            "configuration (exit 0); prove's exit codes in ZooKeeper mode (tests/proofs/test_proofs.py)"),
    LongRun("tests/proofs/test_proof_mutations.py::test_m13_rule_z3_and_property_drift_together_caught_by_the_property_"
            "agreement",
            "a rule, its z3 action and a z3 property drifting together are caught by the property agreement",
            "the rest of the corpus; m14 and m15: weakened z3 properties caught by their agreement with the "
            "invariants on states beyond the reachable ones (tests/proofs/test_proof_mutations.py)"),
    LongRun("tests/kraft/test_kraft_engines.py::test_fuzz_variant_kraft_on_the_command_line_saves_a_scenario_that_replays",
            "fuzz --variant kraft on the command line saves a scenario that replays",
            "fuzz's saved scenario replays in ZooKeeper mode (tests/engines/test_fuzz.py); KRaft scenarios replay through "
            "the CLI (tests/kraft/test_kraft_findings.py)"),
    LongRun("tests/cli/test_traces.py::test_all_violations_writes_every_counterexample",
            "--all-violations writes every counterexample",
            "a saved counterexample replays to the same violation ([bfs], tests/cli/test_traces.py)"),
    LongRun("tests/proofs/test_proofs_kraft.py::test_cli_prove_kraft_checks_the_configuration_the_model_options_name",
            "prove --variant kraft checks the conformance of the configuration its model options name",
            "the same for ZooKeeper mode (tests/proofs/test_prove_conformance.py) and prove --variant kraft on a planted bug"),
    LongRun("tests/proofs/test_proofs_kraft.py::test_the_leader_properties_are_not_proved_and_their_ctis_name_the_steps_that_"
            "break_the_lemmas",
            "the KRaft leader properties are not proved, and their CTIs name the steps that break the lemmas",
            "each proved KRaft property is inductive for every cluster size; z3 bugs planted in the relation break "
            "the proof at their action (tests/proofs/test_proofs_kraft.py)"),
    LongRun("tests/realkafka/test_realkafka_zk.py::test_a_leader_dir_failure_in_zookeeper_mode_moves_leadership_and_leaves_nothing",
            "a ZooKeeper-mode cluster of Kafka 3.9.2 (3 brokers x 2 dirs): the leader's dir fails, the controller moves "
            "leadership to broker 1 with ISR [1, 2] in the state znode, the record is read back; nothing left after",
            "the controller state read from znodes as Kafka writes them (tests/realkafka/test_realkafka_zk.py, a fake client)"),
    LongRun("tests/realkafka/test_realkafka_zk.py::test_a_signal_to_the_harness_leaves_no_zookeeper_or_kafka_process_or_port",
            "SIGINT or SIGKILL of a harness running a ZooKeeper-mode cluster: no ZooKeeper or Kafka JVM, no port left "
            "(and no directory after SIGINT)",
            "the KRaft harness's hygiene shares processes.py; its own SIGINT test is in the default profile"),
    LongRun("tests/realkafka/test_reproduce_zk.py::test_kip112_2_reproduces_on_a_real_zookeeper_mode_cluster_of_3_9_2",
            "reproduce runs kip112-2 on a real ZooKeeper-mode cluster of Kafka 3.9.2: matched at every driven step, "
            "exit 0, nothing left",
            "reproduce of kip112-2 against a scripted cluster that follows the model, and one that leaves it "
            "(tests/realkafka/test_reproduce_zk.py)"),
    LongRun("tests/realkafka/test_patches.py::test_each_patch_compiles_against_its_release_into_a_jar_of_its_classes",
            "every fix's patch fetched (the -sources jar, the release, scalac by Maven), applied and compiled against "
            "its release into a jar that holds the patched class",
            "every patch applies to its release's cached source (tests/realkafka/test_patches.py)"),
)
