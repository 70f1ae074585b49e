{% macro qrepl_batch_id() %}
    {#- The batch this run processes: one more than the last finished batch in
        queue_reader_history. A crashed run is finished by the next one under the same id.
        Read once per run, by the first node that asks (after on-run-start took the run lock),
        and kept for the others (qrepl_run_cache): queue_reader_history is the run's last
        node, so the answer cannot change within a run. -#}
    {%- if not execute -%}
        {{ return(1) }}
    {%- endif -%}
    {{ return(qrepl_run_cache('batch_id', _qrepl_batch_id_read)) }}
{% endmacro %}


{% macro _qrepl_batch_id_read() %}
    {#- qrepl_batch_id's read of queue_reader_history. -#}
    {%- set history = adapter.get_relation(database=none, schema=_qrepl_identifier(target.schema, 'schema'), identifier='queue_reader_history') -%}
    {%- if history is none -%}
        {{ return(1) }}
    {%- endif -%}
    {%- set result = run_query('select coalesce(max(batch_id), 0) + 1 from ' ~ history) -%}
    {{ return(result.rows[0][0] | int) }}
{% endmacro %}


{% macro qrepl_batch_time() %}
    {#- One timestamp for the whole run (dbt's run_started_at, UTC) unless the env var
        QREPL_BATCH_TIME pins it (scenario replay runs on its own clock). Read only while
        executing, so a new value does not make dbt re-parse the project. -#}
    {%- set pinned = env_var('QREPL_BATCH_TIME', '') if execute else '' -%}
    {%- if pinned -%}
        {%- if not modules.re.fullmatch('\\d{4}-\\d{2}-\\d{2}[ T]\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?', pinned) -%}
            {{ exceptions.raise_compiler_error("qrepl: QREPL_BATCH_TIME must look like 2026-01-31 12:00:00, got '" ~ pinned ~ "'") }}
        {%- endif -%}
        {{ return("cast('" ~ pinned ~ "' as timestamp)") }}
    {%- endif -%}
    {%- if not execute -%}
        {{ return('current_timestamp()') }}
    {%- endif -%}
    {{ return("cast('" ~ run_started_at.strftime('%Y-%m-%d %H:%M:%S.%f') ~ "' as timestamp)") }}
{% endmacro %}


{% macro batch_not_yet_written(batch_id) %}
    {#- Guard for the per-batch incremental models: a rerun after a crash must not write a
        batch twice. Iceberg inserts are atomic, so a batch is in a table whole or not at all. -#}
    {%- if is_incremental() -%}
        not exists (select 1 from {{ this }} as already_written where already_written.batch_id = {{ batch_id }})
    {%- else -%}
        true
    {%- endif -%}
{% endmacro %}


{% macro qrepl_queue_rows_view() %}
    {#- int_batch_commands' pre-hook: (re)creates the temporary view `qrepl_queue_rows`, which
        stg_replication_queue reads, in the session the model runs in. It holds the queue rows a
        batch may take, read as of one snapshot of the queue, with that snapshot's id as
        `queue_snapshot_id` (int_batch_commands keeps it with every command it takes).

        Every queue row visible at the snapshot the last batch read is in that batch or an
        earlier one. So when that snapshot is known and the queue has only had appends since
        (an Iceberg changelog of the snapshots in between), only the rows appended after it are
        read: the cut's cost follows the new rows, not the queue's history. Otherwise (the first
        batch, a batch log written before queue_snapshot_id existed, a queue rewritten, rolled
        back or expired past that snapshot) the whole queue is read, as of the snapshot.
        Either way int_batch_commands still leaves out the commands an earlier batch took.

        `queue_order` is the position of the commit that appended the row, SQL Server's
        orderkey: the Iceberg data sequence number of its data file on a whole read, the
        changelog's ordinal of its commit among those since the last batch otherwise. Only its
        order within one batch is used (int_batch_transactions), never a host's clock. -#}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set table = qrepl_relation('replication_queue') -%}
    {%- set position = qrepl_queue_position() -%}
    {%- set columns = [] -%}
    {%- for column in _qrepl_queue_columns() -%}{%- do columns.append('queued.' ~ column) -%}{%- endfor -%}
    {%- set queue_order = 'cast(null as bigint)' -%}
    {%- if position.snapshot is none -%}
        {#- a queue nothing was ever appended to -#}
        {%- set snapshot = 'cast(null as bigint)' -%}
        {%- set rows = table ~ ' as queued where false' -%}
    {%- else -%}
        {%- set snapshot = position.snapshot -%}
        {%- if position.since == snapshot -%}
            {#- nothing appended since the last batch -#}
            {%- set rows = table ~ ' as queued where false' -%}
        {%- elif position.since is not none -%}
            {%- call statement('qrepl_queue_changelog', fetch_result=false) -%}
                call spark_catalog.system.create_changelog_view(
                    table => '{{ table }}',
                    changelog_view => 'qrepl_queue_appended',
                    options => map('start-snapshot-id', '{{ position.since }}', 'end-snapshot-id', '{{ snapshot }}')
                )
            {%- endcall -%}
            {#- the changelog numbers the appends since the last batch in commit order -#}
            {%- set queue_order = 'cast(queued._change_ordinal as bigint)' -%}
            {%- set rows = "qrepl_queue_appended as queued where queued._change_type = 'INSERT'" -%}
        {%- else -%}
            {#- each row's data file, and the Iceberg data sequence number of the commit that
                added it (the queue is append-only: its files are never rewritten) -#}
            {%- set queue_order = 'appends.sequence_number' -%}
            {%- set rows = table ~ ' version as of ' ~ snapshot ~ ' as queued left join (select data_file.file_path, '
                ~ 'min(sequence_number) as sequence_number from ' ~ table ~ '.entries version as of ' ~ snapshot
                ~ ' where status < 2 group by data_file.file_path) as appends on queued._file = appends.file_path' -%}
        {%- endif -%}
    {%- endif -%}
    {{ return('create or replace temporary view qrepl_queue_rows as select ' ~ columns | join(', ')
        ~ ', ' ~ snapshot ~ ' as queue_snapshot_id, ' ~ queue_order ~ ' as queue_order from ' ~ rows) }}
{% endmacro %}


{% macro qrepl_queue_position() %}
    {#- Where the queue stands for this run: `snapshot`, the queue snapshot the batch reads
        (none: nothing was ever appended to the queue), and `since`, the snapshot the latest
        batch read if the queue has had only appends since (none otherwise: see
        qrepl_queue_rows_view). Read once per run (qrepl_run_cache): first by
        int_batch_subscriptions' materialization (macro qrepl_nothing_new_queued), so the
        queue's snapshot is fixed before the subscriptions are copied, then by
        int_batch_commands' pre-hook. -#}
    {{ return(qrepl_run_cache('queue_position', _qrepl_queue_position_read)) }}
{% endmacro %}


{% macro _qrepl_queue_position_read() %}
    {#- qrepl_queue_position's reads of the queue's and the batch log's metadata. -#}
    {%- set table = qrepl_relation('replication_queue') -%}
    {%- set current = run_query("select snapshot_id from " ~ table ~ ".refs where name = 'main'") -%}
    {%- if current.rows | length == 0 -%}
        {{ return({'snapshot': none, 'since': none}) }}
    {%- endif -%}
    {{ return({'snapshot': current.rows[0][0] | int, 'since': _qrepl_last_queue_snapshot(table)}) }}
{% endmacro %}


{% macro qrepl_nothing_new_queued() %}
    {#- True when this run's batch cut can take nothing: the queue was never appended to, or
        nothing was appended since the snapshot the latest batch read (so every visible queue
        row is in an earlier batch). int_batch_subscriptions and int_batch_commands are then
        not run at all (meta qrepl_skip_when: nothing_new_queued, read by the incremental
        materialization in macros/materializations/incremental_spark.sql): they would insert
        no row. -#}
    {{ return(qrepl_run_cache('nothing_new_queued', _qrepl_nothing_new_queued_read)) }}
{% endmacro %}


{% macro _qrepl_nothing_new_queued_read() %}
    {#- qrepl_nothing_new_queued's answer, logged once per run. -#}
    {%- set position = qrepl_queue_position() -%}
    {%- set nothing = position.snapshot is none or position.since == position.snapshot -%}
    {%- if nothing -%}
        {{ log("qrepl: nothing queued since the last batch: the batch cut is not run", info=true) }}
    {%- endif -%}
    {{ return(nothing) }}
{% endmacro %}


{% macro qrepl_batch_is_empty() %}
    {#- True when this run's batch has no command at all in int_batch_commands, valid or
        quarantined. Every per-batch model downstream then writes no row, so it is not run
        (meta qrepl_skip_when: batch_is_empty, read by the incremental materialization in
        macros/materializations/incremental_spark.sql): a run with nothing queued commits
        nothing to them.
        Read once per run (qrepl_run_cache) by the first of them, after int_batch_commands has
        run. False outside `dbt run` / `dbt build`. -#}
    {%- if not qrepl_is_running() -%}
        {{ return(false) }}
    {%- endif -%}
    {{ return(qrepl_run_cache('batch_is_empty', _qrepl_batch_is_empty_read)) }}
{% endmacro %}


{% macro _qrepl_batch_is_empty_read() %}
    {#- qrepl_batch_is_empty's read of int_batch_commands (looked up by name, not ref(): the
        node asking may depend on it only through other models). -#}
    {%- set commands = adapter.get_relation(database=none, schema=_qrepl_identifier(target.schema, 'schema'), identifier='int_batch_commands') -%}
    {%- if commands is none -%}
        {{ return(true) }}
    {%- endif -%}
    {%- set found = run_query('select 1 from ' ~ commands ~ ' where batch_id = ' ~ (qrepl_batch_id() | int) ~ ' limit 1') -%}
    {%- if found.rows | length == 0 -%}
        {{ log("qrepl: batch " ~ qrepl_batch_id() ~ " has no commands: the models after the cut are not run", info=true) }}
    {%- endif -%}
    {{ return(found.rows | length == 0) }}
{% endmacro %}


{% macro _qrepl_queue_columns() %}
    {#- The queue's columns, as documented on the source (models/staging/_sources.yml), which
        python/tests/unit/test_queue_columns.py holds equal to the table the Python layer makes
        (QUEUE_SCHEMA in python/qrepl/warehouse.py): one list, so a column added to the queue
        cannot be silently left out of the batch. -#}
    {%- set columns = [] -%}
    {%- for node in graph.sources.values() if node.source_name == 'qrepl' and node.name == 'replication_queue' -%}
        {%- do columns.extend(node.columns.keys()) -%}
    {%- endfor -%}
    {%- if not columns -%}
        {{ exceptions.raise_compiler_error("qrepl: the source qrepl.replication_queue documents no columns (models/staging/_sources.yml)") }}
    {%- endif -%}
    {{ return(columns) }}
{% endmacro %}


{% macro _qrepl_last_queue_snapshot(table) %}
    {#- The queue snapshot the latest batch that recorded one read, if every snapshot of the
        queue since then is an append still in its history; none otherwise. -#}
    {%- set log = adapter.get_relation(database=none, schema=_qrepl_identifier(target.schema, 'schema'), identifier='int_batch_commands') -%}
    {%- if log is none -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set names = adapter.get_columns_in_relation(log) | map(attribute='name') | map('lower') | list -%}
    {%- if 'queue_snapshot_id' not in names -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set last = run_query('select max_by(queue_snapshot_id, batch_id) from ' ~ log ~ ' where queue_snapshot_id is not null') -%}
    {%- if last.rows[0][0] is none -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set since = last.rows[0][0] | int -%}
    {%- set check -%}
        with snapshots as (
            select history.snapshot_id, history.made_current_at, history.is_current_ancestor, snapshots.operation
            from {{ table }}.history as history
            left join {{ table }}.snapshots as snapshots on history.snapshot_id = snapshots.snapshot_id
        ),
        since as (
            select made_current_at from snapshots where snapshot_id = {{ since }} and is_current_ancestor
        )
        select
            (select count(*) from since) as found,
            (select count(*) from snapshots, since
                where snapshots.is_current_ancestor and snapshots.snapshot_id != {{ since }}
                    and snapshots.made_current_at >= since.made_current_at
                    and not (snapshots.operation <=> 'append')) as not_appends
    {%- endset -%}
    {%- set found = run_query(check) -%}
    {%- if found.rows[0][0] != 1 or found.rows[0][1] != 0 -%}
        {{ return(none) }}
    {%- endif -%}
    {{ return(since) }}
{% endmacro %}


{% macro qrepl_batch_is_coupled() %}
    {#- Whether some publisher row of the batch has more than one candidate (live transaction
        touching it), so that one transaction's decision can depend on another's. Without
        such a row every candidate meets its row as the batch cut found it:
        int_transactions_resolved is its pass 0 alone and int_queued_commands_judged needs no
        window over the rows (the uncoupled fast path). Outside a run (compile, docs, parse)
        and in a dbt unit test the answer is true: the general statements, exact for every
        batch. -#}
    {{ return(qrepl_batch_followers() | int != 0) }}
{% endmacro %}


{% macro qrepl_batch_followers() %}
    {#- How many candidates of the batch follow another on their publisher row (a row with n
        live transactions counts n - 1): 0 for an uncoupled batch. Read from
        int_transaction_rows by the first node that asks (the resolution) and kept for the run
        (qrepl_run_cache: the judging asks too), one grouping of the candidates. -1 (not
        known) outside a run (compile, docs, parse) and in a dbt unit test, whose fixtures are
        not tables. -#}
    {%- if not qrepl_is_running() or model.resource_type == 'unit_test' -%}
        {{ return(-1) }}
    {%- endif -%}
    {{ return(qrepl_run_cache('batch_followers', _qrepl_batch_followers_read)) }}
{% endmacro %}


{% macro _qrepl_batch_followers_read() %}
    {#- qrepl_batch_followers' read of int_transaction_rows. -#}
    {%- set counted = run_query(
        'select coalesce(sum(candidates - 1), 0) from (select count(*) as candidates from '
        ~ ref('int_transaction_rows') ~ ' where batch_id = ' ~ (qrepl_batch_id() | int)
        ~ ' and prejudged_outcome is null group by article, row_key having count(*) > 1)'
    ) -%}
    {{ return(counted.rows[0][0] | int) }}
{% endmacro %}


{% macro qrepl_fold_alone_limit() %}
    {#- int_transactions_resolved folds a coupled batch without set-based passes when at most
        this many of its candidates follow another on their row (qrepl_batch_followers):
        the fold of such a remainder costs less than the passes' windows. The dbt var
        `qrepl_fold_alone_up_to`, else the environment's QREPL_FOLD_ALONE_UP_TO, else 100000
        (make bench-profile, 2026-11-26: a 100k batch whose 99,999 candidates all follow one
        another resolved in 5.2 s folded alone against 6.1 s with the passes; the (1M, 1M)
        batch, far more followers, in 30.1 s against 16.0 s). 0 always runs the passes. -#}
    {{ return(var('qrepl_fold_alone_up_to', env_var('QREPL_FOLD_ALONE_UP_TO', '100000')) | int) }}
{% endmacro %}
