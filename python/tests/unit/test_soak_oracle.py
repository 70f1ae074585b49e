"""The soak's oracle (python/tests/soak_oracle.py) on hand-made histories: it accepts each way a
job write may legitimately leave the table, and it fails on a write overwritten silently."""

from soak_oracle import check

J = ("customers", 1, "job-1")  # the job's write of customer 1


def _history(*states):
    """customers' states, snapshot ids 1, 2, ...; each state: customer 1's (value, version)."""
    return {"customers": [(i, {1: s} if s else {}) for i, s in enumerate(states, 1)]}


def test_a_write_still_in_the_table_is_kept():
    v = check(_history(("c1", "v0"), ("job-1", "v0"), ("job-1", "v1")), [J], {}, {}, {})
    assert v.losses == [] and v.present == 1


def test_a_write_replaced_by_a_later_job_write_is_kept():
    v = check(_history(("c1", "v0"), ("job-1", "v0"), ("job-2", "v0")), [J, ("customers", 1, "job-2")], {}, {}, {})
    assert v.losses == [] and (v.present, v.by_job) == (1, 1)


def test_a_write_replaced_by_a_subscriber_who_saw_it_is_kept():
    commands = {"v2": {"article": "customers", "key": 1, "old_value": "job-1", "old_version": "v1", "tran_id": "a-1"}}
    v = check(_history(("c1", "v0"), ("job-1", "v0"), ("job-1", "v1"), ("a-1", "v2")), [J], commands, {}, {})
    assert v.losses == [] and v.by_seen_command == 1


def test_a_write_overwritten_silently_is_lost():
    """a's update was made on the row before the job's write (c1 at v0), and replaced the job's
    write with no conflict: the failure the soak exists to catch."""
    commands = {"v2": {"article": "customers", "key": 1, "old_value": "c1", "old_version": "v0", "tran_id": "a-1"}}
    v = check(_history(("c1", "v0"), ("job-1", "v0"), ("job-1", "v1"), ("a-1", "v2")), [J], commands, {}, {})
    [loss] = v.losses
    assert (loss.written_in, loss.last_seen_in, loss.replaced_in, loss.replaced_by) == (2, 3, 4, ("a-1", "v2"))
    assert "a-1" in str(loss) and "no conflict names this write" in str(loss)


def test_a_before_image_with_the_value_but_another_version_is_not_having_seen_it():
    commands = {"v2": {"article": "customers", "key": 1, "old_value": "job-1", "old_version": "v9", "tran_id": "a-1"}}
    v = check(_history(("c1", "v0"), ("job-1", "v0"), ("job-1", "v1"), ("a-1", "v2")), [J], commands, {}, {})
    assert len(v.losses) == 1


def test_a_write_replaced_under_subscriber_wins_with_its_conflict_logged_is_kept():
    commands = {"v2": {"article": "customers", "key": 1, "old_value": "c1", "old_version": "v0", "tran_id": "a-1"}}
    conflicts = {
        "c": {
            "article": "customers",
            "key": 1,
            "publisher_value": "job-1",
            "publisher_version": "v1",
            "new_version": "v2",
        }
    }
    v = check(_history(("c1", "v0"), ("job-1", "v0"), ("job-1", "v1"), ("a-1", "v2")), [J], commands, {}, conflicts)
    assert v.losses == [] and v.by_conflict == 1


def test_a_write_met_by_the_first_of_two_commands_folded_into_one_batch_write_is_kept():
    """a-1 met the job's write (conflict, subscriber won); b-2, in the same batch, met a-1's row
    and leaves the row: one snapshot goes from the job's write to b-2's."""
    commands = {"v3": {"article": "customers", "key": 1, "old_value": "a-1", "old_version": "v2", "tran_id": "b-2"}}
    conflicts = {
        "c": {
            "article": "customers",
            "key": 1,
            "publisher_value": "job-1",
            "publisher_version": "v1",
            "new_version": "v2",
            "winner": "subscriber",
        }
    }
    history = _history(("c1", "v0"), ("job-1", "v0"), ("job-1", "v1"), ("b-2", "v3"))
    assert check(history, [J], commands, {}, conflicts).by_conflict == 1
    kept_by_publisher = {"c": {**conflicts["c"], "winner": "publisher"}}
    assert len(check(history, [J], commands, {}, kept_by_publisher).losses) == 1


def test_a_conflict_that_names_another_publisher_row_does_not_cover_the_write():
    commands = {"v2": {"article": "customers", "key": 1, "old_value": "c1", "old_version": "v0", "tran_id": "a-1"}}
    conflicts = {
        "c": {"article": "customers", "key": 1, "publisher_value": "c1", "publisher_version": "v0", "new_version": "v2"}
    }
    v = check(_history(("c1", "v0"), ("job-1", "v0"), ("job-1", "v1"), ("a-1", "v2")), [J], commands, {}, conflicts)
    assert len(v.losses) == 1


def test_a_hand_resolution_is_judged_by_the_publisher_row_its_conflict_recorded():
    history = _history(("c1", "v0"), ("job-1", "v0"), ("job-1", "v1"), ("a-1", "r1"))
    seen = {
        "c": {
            "article": "customers",
            "key": 1,
            "publisher_value": "job-1",
            "publisher_version": "v1",
            "new_version": "v2",
        }
    }
    assert check(history, [J], {}, {"r1": "c"}, seen).by_resolve == 1
    unseen = {"c": {**seen["c"], "publisher_value": "c1", "publisher_version": "v0"}}
    [loss] = check(history, [J], {}, {"r1": "c"}, unseen).losses
    assert "hand resolution of conflict c" in loss.why


def test_a_value_put_back_after_a_refused_merge_is_judged_at_its_last_appearance():
    history = _history(("c1", "v0"), ("job-1", "v1"), ("imm-1", "v2"), ("job-1", "v1"))
    assert check(history, [J], {}, {}, {}).present == 1


def test_a_write_in_no_snapshot_and_a_row_deleted_by_nobody_are_lost():
    assert "in no snapshot" in check(_history(("c1", "v0")), [J], {}, {}, {}).losses[0].why
    assert "deleted" in check(_history(("job-1", "v0"), None), [J], {}, {}, {}).losses[0].why
    unknown = check(_history(("job-1", "v0"), ("x", "v5")), [J], {}, {}, {}).losses[0]
    assert "no known writer" in unknown.why
