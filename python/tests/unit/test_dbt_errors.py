"""A failed dbt call says why in one line, and a commit that lost to another writer's is
known as one (qrepl run and the publisher's trigger make it again, from a fresh read)."""

from qrepl.storage.dbt_runner import _error_line, lost_to_a_concurrent_commit

# the shape of a Spark error raised through dbt when a job committed during the trigger's MERGE
LOST = """Database Error
  An error occurred while calling o123.sql.
  : org.apache.iceberg.exceptions.ValidationException: Found conflicting files that can contain records matching true: [file:/w/customers/data/00000-1.parquet]
  at org.apache.iceberg.exceptions.ValidationException.check(ValidationException.java:49)
  at org.apache.iceberg.MergingSnapshotProducer.validateAddedDataFiles(MergingSnapshotProducer.java:400)
  at java.base/java.lang.Thread.run(Thread.java:840)"""


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def test_a_jvm_stack_gives_icebergs_exception_not_its_last_frame():
    line = _error_line(_lines(LOST))
    assert line.startswith(": org.apache.iceberg.exceptions.ValidationException: Found conflicting files")


def test_a_java_exception_is_named_when_iceberg_says_nothing():
    text = "boom\njava.lang.IllegalStateException: state\nat a.b.C.d(C.java:1)\nat java.base/java.lang.Thread.run(Thread.java:840)"
    assert _error_line(_lines(text)) == "java.lang.IllegalStateException: state"


def test_an_error_that_ends_in_words_keeps_its_last_line():
    assert _error_line(["Compilation Error in model x", "the table was not found"]) == "the table was not found"
    assert _error_line([]) == ""


def test_a_lost_commit_is_known_and_other_failures_are_not():
    assert lost_to_a_concurrent_commit(RuntimeError(LOST))
    assert lost_to_a_concurrent_commit(
        RuntimeError(
            "org.apache.iceberg.exceptions.CommitFailedException: Cannot commit customers: metadata location changed"
        )
    )
    assert not lost_to_a_concurrent_commit(RuntimeError("[TABLE_OR_VIEW_NOT_FOUND] The table cannot be found"))
