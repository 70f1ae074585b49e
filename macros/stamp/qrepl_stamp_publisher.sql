{% macro qrepl_stamp_publisher() %}
    {#- The publisher's trigger (docs/spec.md §1, docs/architecture.md "The publisher's
        trigger"): every publisher row changed by a writer that did not give it a new
        msrepl_tran_version (an UPDATE, MERGE or INSERT from another Spark job, a dbt model, a
        Thrift client) gets one now, as SQL Server's publisher trigger would have given it at
        the write. Run by on-run-start right after the run lock, before the batch cut reads the
        publisher, so a subscriber's change to such a row meets its conflict; `qrepl
        distribute` runs it too before it diffs the publisher.

        Per article, from the snapshot the last stamp examined (table publisher_stamps):
        1. nothing committed since: nothing read (metadata only);
        2. the data files added since (Iceberg's entries of the snapshots after it; a DELETE
           adds none: absence needs no version) are read directly, in their own format
           (Parquet or ORC), key and version only: the cost follows what was written since
           the last stamp, not the table's size. A compaction since (any tool's) is not read,
           but the files it replaced are, as of its parent: it hides no write;
        3. a version the queue reader wrote since (int_batch_commands of the batches since) is
           fresh; any other is checked against the table as of the last stamp: a version that
           was already there (an UPDATE or MERGE that kept it, an INSERT that copied it) or none
           at all (an INSERT that set none) is stamped, with a new uuid, by one MERGE that
           matches the row's key and the version it was seen with (compare-and-swap); a row
           a copy-on-write commit carried over (same key, version and image as at the last
           stamp) is not;
        4. the examined snapshot is recorded (or the stamp's own, when nothing else committed
           between them). When something did (another job's write, or a `qrepl distribute`
           stamping the same rows first, as a concurrent run and distribution do), the commits
           after the examined snapshot are examined in turn, from step 2, until a pass stamps
           nothing or its stamp's parent is the snapshot it examined: the batch cut reads the
           table as of the snapshot recorded here (macro qrepl_publisher_as_stamped), and a
           snapshot from before the stamp would show the rows it stamped at their old version,
           so a subscriber's change to them would be judged applied, with no conflict, and
           then kept out by the compare-and-swap: lost unlogged (docs/spec.md §10).
        A writer that sets a fresh version itself is left alone. Deletes need nothing. A run
        that finds nothing to stamp writes nothing to the article. -#}
    {#- in a run, only when it runs a reader model (qrepl_reader_selected) -#}
    {%- if not ((qrepl_is_running() and qrepl_reader_selected()) or (execute and flags.WHICH == 'run-operation')) -%}
        {{ return('') }}
    {%- endif -%}
    {#- a run with nothing to do compares no versions: the next reader of versions stamps
        (qrepl_run_is_idle, docs/spec.md 5.10) -#}
    {%- if qrepl_run_is_idle() -%}
        {{ return('') }}
    {%- endif -%}
    {%- set config = qrepl_config() -%}
    {%- set stamps = qrepl_relation('publisher_stamps') -%}
    {%- call statement('qrepl_stamp_log', fetch_result=false) -%}
        create table if not exists {{ stamps }} (
            article string, snapshot_id bigint, batch_id int, stamp_seq bigint,
            stamped_rows bigint, stamped_at timestamp
        ) using iceberg tblproperties ('format-version' = '2')
    {%- endcall -%}
    {%- set batch_id = qrepl_batch_id() -%}
    {%- set records = [] -%}
    {#- a record's batch_id: the first batch whose versions the examined snapshots cannot
        hold, so the next stamp takes a version of that batch on as the queue reader's own
        (fresh) without looking it up. The batch this run processes, unless it was already
        cut: a run that failed after its MERGE, or one still in its tail while `qrepl
        distribute` stamps, may have written its versions before this examination, and a job
        that rewrites such a row keeping the version must still be stamped (a failed
        run then a distribute). Asked only when a record is written -#}
    {%- set recorded_batch = [] -%}
    {#- per article, the snapshot examined as of now and its stamp_seq, kept for this run:
        batch_applied's MERGE is recorded as examined only if it is that snapshot's child
        (macro qrepl_stamp_own_merge) -#}
    {%- set examined = qrepl_run_state('stamp_examined', {}) -%}
    {%- do examined.clear() -%}
    {%- for article in config['articles'] -%}
        {%- set passes = namespace(record=_qrepl_stamp_article(article, stamps, none), stamped=0) -%}
        {%- for attempt in range(qrepl_stamp_passes()) -%}
            {%- if passes.record is not none and passes.record.late -%}
                {%- set passes.stamped = passes.stamped + passes.record.stamped -%}
                {%- set passes.record = _qrepl_stamp_article(article, stamps, passes.record) -%}
            {%- endif -%}
        {%- endfor -%}
        {%- set record = passes.record -%}
        {%- if record is not none and record.late -%}
            {{ exceptions.raise_compiler_error("qrepl: article " ~ article['name'] ~ ": its table " ~ qrepl_article_relation(article)
                ~ " kept changing while the publisher's trigger stamped it (" ~ qrepl_stamp_passes() ~ " passes, each overtaken by"
                ~ " another commit); no batch was cut; run again") }}
        {%- endif -%}
        {%- if record is not none -%}
            {%- do record.update({'stamped': record.stamped + passes.stamped}) -%}
            {%- do examined.update({article['name']: {'snapshot': record.examined, 'seq': record.seq}}) -%}
            {%- if not record.unchanged -%}
                {%- if not recorded_batch -%}
                    {%- do recorded_batch.append(batch_id + (1 if _qrepl_batch_was_cut(batch_id) else 0)) -%}
                {%- endif -%}
                {%- do records.append("('" ~ article['name'] ~ "', " ~ record.examined ~ ", " ~ recorded_batch[0] ~ ", "
                    ~ record.seq ~ ", " ~ record.stamped ~ ", current_timestamp())") -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if records -%}
        {#- one commit for every article examined -#}
        {%- call statement('qrepl_stamp_record', fetch_result=false) -%}
            insert into {{ stamps }} values {{ records | join(', ') }}
        {%- endcall -%}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}


{% macro _qrepl_stamp_article(article, stamps, resume) %}
    {#- qrepl_stamp_publisher for one article: what to record (examined snapshot, stamp_seq,
        rows stamped), with `unchanged` true when nothing was committed since the last stamp
        (the last record then stands, and is returned only to be kept for the run), `late`
        true when this pass's stamp MERGE has another parent than the examined snapshot
        (something committed in between, which a next pass examines), or none when no snapshot
        can be recorded. `resume`: the record of the pass before, whose examined snapshot this
        pass starts from (none: start from the last record in publisher_stamps). -#}
    {%- set table = qrepl_article_relation(article) -%}
    {%- if resume is none -%}
        {#- the last record, snapshot and batch id from one row: a run's trigger and a `qrepl
            distribute`'s that ran at once both write the stamp_seq after the one they read, and
            either record alone is true (its snapshot was examined with that batch id), but a
            snapshot of one paired with the batch id of the other may not be -#}
        {%- set last = run_query("select latest.snapshot_id, latest.batch_id, coalesce(latest.stamp_seq, 0) from (select max_by("
            ~ "named_struct('snapshot_id', snapshot_id, 'batch_id', batch_id, 'stamp_seq', stamp_seq), "
            ~ "named_struct('stamp_seq', stamp_seq, 'snapshot_id', snapshot_id)) as latest from "
            ~ stamps ~ " where article = '" ~ article['name'] ~ "')").rows[0] -%}
    {%- else -%}
        {#- a first stamp (no record yet) is resumed as one: the snapshot it examined may be
            from before the table had a version column -#}
        {%- set last = [none if resume.first else resume.examined, resume.batch, resume.seq - 1] -%}
    {%- endif -%}
    {%- set since = last[0] -%}
    {%- set current = run_query("select snapshot_id from " ~ table ~ ".refs where name = 'main'") -%}
    {%- if current.rows | length == 0 -%}
        {#- a table with no snapshot yet (just created): its history starts here (0 stands for
            "before the first snapshot"), so every write to come is examined -#}
        {{ return({'examined': 0, 'seq': (last[2] | int) + 1, 'batch': last[1], 'stamped': 0, 'unchanged': false, 'late': false, 'first': true} if since is none else none) }}
    {%- endif -%}
    {%- set examined = current.rows[0][0] | int -%}
    {%- if since is not none and (since | int) == examined -%}
        {{ return({'examined': examined, 'seq': (last[2] | int) + (0 if resume is none else 1), 'batch': last[1], 'stamped': 0, 'unchanged': resume is none, 'late': false, 'first': false}) }}
    {%- endif -%}
    {%- set keys = article['key'] -%}
    {%- set on = [] -%}
    {%- for k in keys -%}{%- do on.append('target.' ~ k ~ ' = stamp.' ~ k) -%}{%- endfor -%}
    {%- set view = 'qrepl_stamp_' ~ article['name'] -%}
    {#- a stamp that failed earlier in this process (the session lives on) left its views -#}
    {%- do _qrepl_stamp_drop_views(view) -%}
    {%- if since is none -%}
        {#- the first stamp of a table that already held rows (one published in place): rows
            with no version get one. Read as the table is now, not as of a snapshot: a table
            just published gained the column after its last snapshot, whose schema lacks it -#}
        {%- set unstamped = 'select ' ~ keys | join(', ') ~ ', cast(null as string) as seen_version from '
            ~ table ~ ' where msrepl_tran_version is null' -%}
    {%- else -%}
        {%- set since = since | int -%}
        {%- set ancestors = run_query("call spark_catalog.system.ancestors_of('" ~ table ~ "', " ~ examined ~ ")").rows -%}
        {#- a compaction (operation `replace`: `qrepl maintain`'s, or any other tool's) rewrites
            rows without changing them: its own files are not read. The files it replaced are
            no longer live as of the examined snapshot, so those the commits before it added
            are read as of its parent (below) -#}
        {%- set rewrites = run_query("select snapshot_id from " ~ table ~ ".snapshots where operation = 'replace'") -%}
        {%- set rewritten = [] -%}
        {%- for row in rewrites.rows -%}{%- do rewritten.append(row[0] | int) -%}{%- endfor -%}
        {#- after: the commits since the last stamp, compactions left out. compacted: per
            compaction since, its parent and the commits between the one before it (or the
            last stamp) and it, whose files it may have replaced -#}
        {%- set after = [] -%}
        {%- set compacted = [] -%}
        {%- set found = [] -%}
        {%- for row in ancestors -%}
            {%- if found | length == 0 -%}
                {%- if (row[0] | int) == since -%}
                    {%- do found.append(true) -%}
                {%- elif (row[0] | int) in rewritten -%}
                    {%- if not loop.last -%}
                        {%- do compacted.append({'parent': ancestors[loop.index][0] | int, 'commits': []}) -%}
                    {%- endif -%}
                {%- else -%}
                    {%- do after.append(row[0] | int) -%}
                    {%- if compacted -%}{%- do compacted[-1]['commits'].append(row[0] | int) -%}{%- endif -%}
                {%- endif -%}
            {%- endif -%}
        {%- endfor -%}
        {#- the table as of the last stamp is looked up only when it is in the table's history
            (since 0: the table was empty; otherwise it was rolled back or rewritten past it,
            and every live row is then a candidate, checked within itself) -#}
        {%- set lookup = found | length > 0 and since != 0 -%}
        {%- set reads = [] -%}
        {%- if found | length == 0 and since != 0 -%}
            {%- do reads.append('select ' ~ keys | join(', ') ~ ', msrepl_tran_version, 0 as file_seq, false as rewritten from ' ~ table ~ ' version as of ' ~ examined) -%}
        {%- elif after -%}
            {#- the data files the commits since added, live as of the examined snapshot or, for
                those a compaction replaced, as of its parent: one entries query for the examined
                snapshot and one per compaction since. A file read twice (a compaction that
                replaced none of them, e.g. a manifest rewrite) is read once -#}
            {%- set listings = [{'as_of': examined, 'commits': after}] -%}
            {%- for c in compacted if c['commits'] -%}
                {%- do listings.append({'as_of': c['parent'], 'commits': c['commits']}) -%}
            {%- endfor -%}
            {%- set files = {} -%}
            {#- the commits since that removed data files: copy-on-write rewrites (an UPDATE,
                MERGE or DELETE of a table in that mode; pyiceberg's every write), whose files
                also hold the rewritten files' other rows, unchanged -#}
            {%- set rewrites_since = [] -%}
            {%- for row in run_query('select snapshot_id from ' ~ table ~ '.snapshots where snapshot_id in (' ~ after | join(', ')
                ~ ") and coalesce(cast(summary['deleted-data-files'] as bigint), 0) > 0").rows -%}
                {%- do rewrites_since.append(row[0] | int) -%}
            {%- endfor -%}
            {%- for listing in listings -%}
                {%- set entries = run_query('select data_file.file_path, data_file.file_format, min(sequence_number), min(snapshot_id) from '
                    ~ table ~ '.entries version as of ' ~ listing['as_of'] ~ ' where status < 2 and data_file.content = 0 and snapshot_id in ('
                    ~ listing['commits'] | join(', ') ~ ') group by data_file.file_path, data_file.file_format') -%}
                {%- for f in entries.rows -%}
                    {%- if f[0] not in files or (f[2] | int) < files[f[0]][1] -%}
                        {%- do files.update({f[0]: [f[1] | upper, f[2] | int, (f[3] | int) in rewrites_since]}) -%}
                    {%- endif -%}
                {%- endfor -%}
            {%- endfor -%}
            {%- for path, f in files | dictsort -%}
                {%- if f[0] not in ('PARQUET', 'ORC') -%}
                    {{ exceptions.raise_compiler_error("qrepl: article " ~ article['name'] ~ ": table " ~ table ~ " has a data file in "
                        ~ f[0] ~ " format, which the publisher's trigger cannot read (Parquet and ORC only): " ~ path) }}
                {%- endif -%}
                {#- a file path from Iceberg's own metadata; quoted for a backtick identifier -#}
                {%- do reads.append('select ' ~ keys | join(', ') ~ ', msrepl_tran_version, ' ~ f[1] ~ ' as file_seq, '
                    ~ ('true' if f[2] else 'false') ~ ' as rewritten from ' ~ f[0] | lower ~ '.`' ~ (path | replace('`', '``')) ~ '`') -%}
            {%- endfor -%}
        {%- endif -%}
        {%- if not reads -%}
            {%- set unstamped = none -%}
        {%- else -%}
            {%- set batch_log = qrepl_relation('int_batch_commands') -%}
            {%- set log_exists = qrepl_relation_exists(batch_log) -%}
            {%- set fresh -%}
                {%- if log_exists and last[1] is not none -%}
                    select distinct new_version from {{ batch_log }} where batch_id >= {{ last[1] | int }} and new_version is not null
                {%- else -%}
                    select cast(null as string) as new_version where false
                {%- endif -%}
            {%- endset -%}
            {#- each row read: unstamped here (no version, or a version an earlier file of these
                commits already holds: written, then rewritten by a writer that kept it), or to
                be looked up (not a version the queue reader wrote since). Cached: it is small,
                and both questions below read it -#}
            {%- set judged = view ~ '_judged' -%}
            {%- call statement('qrepl_stamp_judge', fetch_result=false) -%}
                cache table {{ judged }} as
                with candidates as ({{ reads | join(' union all ') }}),
                ranked as (
                    select *, min(file_seq) over (partition by msrepl_tran_version) as first_seq from candidates
                )
                select
                    ranked.{{ keys | join(', ranked.') }},
                    ranked.msrepl_tran_version as seen_version,
                    ranked.rewritten,
                    (ranked.msrepl_tran_version is null or ranked.file_seq > ranked.first_seq) as unstamped_here,
                    fresh.new_version is null as not_fresh
                from ranked
                left join ({{ fresh }}) as fresh on ranked.msrepl_tran_version = fresh.new_version
            {%- endcall -%}
            {#- the table as of the last stamp is read only when a row needs it (after a queue
                reader batch alone, none does), and then as the probe side of a join whose
                build side is those few rows: one pass over the versions, no sort of the table -#}
            {%- set to_look_up = (run_query('select count(*) from ' ~ judged ~ ' where not unstamped_here and not_fresh').rows[0][0] | int) if lookup else 0 -%}
            {#- a row carried over unchanged: a copy-on-write writer (pyiceberg, a table set back
                from merge-on-read) rewrites a whole file to change one row of it, and the file's
                other rows come back with their versions. A row in a file such a commit added,
                with the same key, version and image (row_json_expr: every column) now as at the
                last stamp, is not stamped: a row it rewrote unchanged cannot be told from it,
                and changed nothing either. In a merge-on-read commit the row an UPDATE of no
                value wrote is still stamped (only that row is in the commit's file).
                Compared only while the last stamp's snapshot has every column of the article (a
                column added since: every candidate is stamped, as before) -#}
            {%- set compare = namespace(carried=false) -%}
            {%- if to_look_up > 0 -%}
                {%- set before_columns = run_query('select * from ' ~ table ~ ' version as of ' ~ since ~ ' limit 0').column_names | map('lower') | list -%}
                {%- set compare.carried = 'msrepl_tran_version' in before_columns -%}
                {%- for name, type in article['columns'] if name | lower not in before_columns -%}
                    {%- set compare.carried = false -%}
                {%- endfor -%}
            {%- endif -%}
            {%- set carried = compare.carried -%}
            {%- set unstamped -%}
                select distinct {{ keys | join(', ') }}, seen_version from {{ judged }} where unstamped_here
                {%- if to_look_up > 0 %}
                union
                -- a version the table held at the last stamp: an UPDATE or MERGE that kept it,
                -- an INSERT that copied it
                select /*+ BROADCAST(j) */ distinct j.{{ keys | join(', j.') }}, j.seen_version
                from (
                    select msrepl_tran_version from {{ table }} version as of {{ since }}
                    where msrepl_tran_version is not null
                ) as held
                inner join {{ judged }} as j on j.seen_version = held.msrepl_tran_version
                {%- if carried %}
                left anti join (
                    -- the candidates whose row is the same now as at the last stamp: each side
                    -- read for the candidates' keys only (the few candidates broadcast)
                    select now_rows.{{ keys | join(', now_rows.') }}, now_rows.msrepl_tran_version
                    {%- for side, snapshot in [('now_rows', examined), ('before_rows', since)] %}
                    {{ 'from' if loop.first else 'inner join' }} (
                        select /*+ BROADCAST(c) */
                            {% for k in keys %}t.{{ k }}, {% endfor %}t.msrepl_tran_version,
                            {{ row_json_expr(article, 't.', 't.msrepl_tran_version') }} as row_image
                        from {{ table }} version as of {{ snapshot }} as t
                        left semi join {{ judged }} as c
                            on {% for k in keys %}{{ 'and ' if not loop.first }}t.{{ k }} = c.{{ k }} {% endfor %}
                    ) as {{ side }}
                    {%- endfor %}
                        on {% for k in keys %}now_rows.{{ k }} = before_rows.{{ k }} and {% endfor -%}
                        now_rows.msrepl_tran_version <=> before_rows.msrepl_tran_version
                        and now_rows.row_image <=> before_rows.row_image
                ) as carried_over
                    on j.rewritten and {% for k in keys %}j.{{ k }} = carried_over.{{ k }} and {% endfor -%}
                    j.seen_version <=> carried_over.msrepl_tran_version
                {%- endif %}
                where not j.unstamped_here and j.not_fresh
                {%- endif %}
            {%- endset -%}
        {%- endif -%}
    {%- endif -%}
    {%- set stamped = 0 -%}
    {%- set late = namespace(value=false) -%}
    {%- if unstamped is not none -%}
        {%- call statement('qrepl_stamp_candidates', fetch_result=false) -%}
            cache table {{ view }} as select *, uuid() as stamp from ({{ unstamped }}) as unstamped
        {%- endcall -%}
        {%- set stamped = run_query('select count(*) from ' ~ view).rows[0][0] | int -%}
        {%- if stamped > 0 -%}
            {%- call statement('qrepl_stamp_merge', fetch_result=false) -%}
                merge into {{ table }} as target
                using {{ view }} as stamp
                on {{ on | join(' and ') }} and target.msrepl_tran_version <=> stamp.seen_version
                when matched then update set target.msrepl_tran_version = stamp.stamp
            {%- endcall -%}
            {{ log("qrepl: " ~ article['name'] ~ ": " ~ stamped ~ " row(s) changed by a writer that set no new version were stamped", info=true) }}
            {#- the stamp's own snapshot when nothing else committed in between: its versions are
                fresh, and the next stamp need not read them -#}
            {%- set after_merge = run_query("call spark_catalog.system.ancestors_of('" ~ table ~ "')").rows -%}
            {%- if after_merge | length > 1 and (after_merge[1][0] | int) == examined -%}
                {%- set examined = after_merge[0][0] | int -%}
            {%- else -%}
                {#- a commit came between the examination and this stamp: examined next -#}
                {%- set late.value = true -%}
            {%- endif -%}
        {%- endif -%}
        {%- do _qrepl_stamp_drop_views(view) -%}
    {%- endif -%}
    {%- if since is none and stamped == 0 -%}
        {#- the next stamp reads the table as of the recorded snapshot: not one from before
            the table had a version column (nothing written since it was published) -#}
        {%- set columns = run_query('select * from ' ~ table ~ ' version as of ' ~ examined ~ ' limit 0').column_names -%}
        {%- if 'msrepl_tran_version' not in columns -%}
            {{ return(none) }}
        {%- endif -%}
    {%- endif -%}
    {{ return({'examined': examined, 'seq': (last[2] | int) + 1, 'batch': last[1], 'stamped': stamped, 'unchanged': false, 'late': late.value, 'first': since is none}) }}
{% endmacro %}


{% macro qrepl_stamp_passes() %}
    {#- How many times the publisher's trigger examines an article's new commits in one stamp
        before it gives up and fails the run (each pass but the first is caused by a commit
        that landed between the pass's examination and its stamp MERGE). -#}
    {{ return(8) }}
{% endmacro %}


{% macro _qrepl_batch_was_cut(batch_id) %}
    {#- Whether int_batch_commands already holds `batch_id` (its run failed or is still going). -#}
    {%- set log = qrepl_relation('int_batch_commands') -%}
    {%- if not qrepl_relation_exists(log) -%}
        {{ return(false) }}
    {%- endif -%}
    {{ return(run_query('select 1 from ' ~ log ~ ' where batch_id = ' ~ (batch_id | int) ~ ' limit 1').rows | length > 0) }}
{% endmacro %}


{% macro _qrepl_stamp_drop_views(view) %}
    {#- The stamp's cached temporary views of one article (`view` and `view`_judged): uncached
        and dropped, at the end of a stamp and before one (a stamp that failed earlier in the
        same process left them). -#}
    {%- for name in [view, view ~ '_judged'] -%}
        {%- call statement('qrepl_stamp_uncache', fetch_result=false) -%}
            uncache table if exists {{ name }}
        {%- endcall -%}
        {%- call statement('qrepl_stamp_drop', fetch_result=false) -%}
            drop view if exists {{ name }}
        {%- endcall -%}
    {%- endfor -%}
{% endmacro %}
