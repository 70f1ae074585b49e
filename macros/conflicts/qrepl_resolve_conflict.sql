{% macro qrepl_resolve_conflict(conflict_id, keep, resolved_by='') %}
    {#- A conflict resolved by hand (docs/conflicts.md), as a run-operation:
            dbt run-operation qrepl_resolve_conflict --args '{conflict_id: ..., keep: subscriber}'
        (`qrepl conflicts --resolve ID --keep subscriber|publisher` runs this same macro).

        keep publisher: the conflict is closed as reviewed; nothing else changes.
        keep subscriber: the losing side's row is written to the publisher with a new version,
        by compare-and-swap against the row the conflict recorded: its version
        (publisher_version) and its content (publisher_row, the current row rendered the same
        way by row_json_expr and compared as text, inside the MERGE's condition), or its
        absence for update_missing: an upsert of the subscriber's row, or a delete for a delete
        conflict. The row is the evidence (DESIGN.md §10): a job's plain SQL that changed it and
        kept its version is a change too. A row changed since the conflict is refused with one
        line naming what changed. A conflict the subscriber already won (subscriber_wins) has
        nothing to write.

        Every resolution is one row of conflict_reviews (who, when, how, the version written),
        which only this macro and qrepl_remove_conflicts write. A removed conflict is refused. Resolving again changes nothing and says how it was
        resolved. The version written is derived from the conflict id, so a run killed after
        its publisher write and before its review finds its own write and records it.
        Distribution brings the publisher's new row to every subscriber. -#}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- do _qrepl_conflict_id(conflict_id) -%}
    {%- if keep not in ['subscriber', 'publisher'] -%}
        {{ exceptions.raise_compiler_error("qrepl: keep must be subscriber or publisher, got '" ~ (keep | string)[:40] ~ "'") }}
    {%- endif -%}
    {%- set who = _qrepl_reviewer(resolved_by, 'resolved_by') -%}
    {%- set conflicts = qrepl_relation('conflicts') -%}
    {%- set reviews = _qrepl_conflict_reviews() -%}
    {%- set done = run_query("select keep, outcome, resolved_by, cast(resolved_at as string) from " ~ reviews
        ~ " where conflict_id = '" ~ conflict_id ~ "' order by case when outcome = 'removed' then 1 else 0 end") -%}
    {%- if done.rows | length > 0 -%}
        {%- set r = done.rows[0] -%}
        {%- if r[1] == 'removed' -%}
            {{ exceptions.raise_compiler_error("qrepl: conflict " ~ conflict_id ~ " was removed from the lists by " ~ r[2] ~ " at " ~ r[3] ~ ": nothing to resolve") }}
        {%- endif -%}
        {{ log("qrepl: conflict " ~ conflict_id ~ " was already resolved (keep " ~ r[0] ~ ": " ~ r[1] ~ ", by " ~ r[2] ~ " at " ~ r[3] ~ "): nothing changed", info=true) }}
        {{ return('') }}
    {%- endif -%}
    {%- set found = run_query("select article, conflict_type, winner, publisher_version from " ~ conflicts
        ~ " where conflict_id = '" ~ conflict_id ~ "'") -%}
    {%- if found.rows | length == 0 -%}
        {{ exceptions.raise_compiler_error("qrepl: no conflict " ~ conflict_id ~ " (removed, purged by retention, or never logged): `qrepl conflicts` lists them") }}
    {%- endif -%}
    {%- set article_name, conflict_type, winner, recorded = found.rows[0] -%}
    {%- set article = none -%}
    {%- for a in qrepl_config()['articles'] if a.name == article_name -%}
        {%- set article = a -%}
        {%- do _qrepl_resolve_write(conflict_id, keep, who, reviews, conflicts, a, conflict_type, winner, recorded) -%}
    {%- endfor -%}
{% endmacro %}


{% macro _qrepl_resolve_write(conflict_id, keep, who, reviews, conflicts, article, conflict_type, winner, recorded) %}
    {#- qrepl_resolve_conflict's write and review for one conflict of `article`. -#}
    {%- set table = qrepl_article_relation(article) -%}
    {%- set h = "md5(concat('qrepl-resolve:', '" ~ conflict_id ~ "'))" -%}
    {%- set version -%}
        concat(substr({{ h }}, 1, 8), '-', substr({{ h }}, 9, 4), '-4', substr({{ h }}, 14, 3), '-8', substr({{ h }}, 18, 3), '-', substr({{ h }}, 21, 12))
    {%- endset -%}
    {%- set key_ddl = article_schema_ddl(article, keys_only=true) -%}
    {%- set on = [] -%}
    {%- for k in article.key -%}{%- do on.append('target.' ~ k ~ ' = source.' ~ k) -%}{%- endfor -%}
    {%- set image_now = row_json_expr(article, 'target.', 'target.msrepl_tran_version') -%}
    {%- set changed = [] -%}
    {%- for name, type in article.columns -%}
        {%- do changed.append("case when not (target." ~ name ~ " <=> source.qrepl_was." ~ name ~ ") then '" ~ name ~ "' end") -%}
    {%- endfor -%}
    {%- set row_now -%}
        select
            target.msrepl_tran_version,
            coalesce({{ image_now }} = source.qrepl_recorded, false) as qrepl_same,
            concat_ws(', ', {{ changed | join(', ') }}) as qrepl_changed
        from {{ table }} as target
        inner join (
            select
                parsed.*,
                c.publisher_row as qrepl_recorded,
                from_json(c.publisher_row, '{{ article_schema_ddl(article) }}', {{ qrepl_json_options() }}) as qrepl_was
            from {{ conflicts }} as c
            lateral view inline(array(from_json(c.row_key, '{{ key_ddl }}'))) parsed
            where c.conflict_id = '{{ conflict_id }}'
        ) as source on {{ on | join(' and ') }}
    {%- endset -%}
    {%- set is_delete = conflict_type in ['delete_update', 'delete_missing'] -%}
    {%- set outcome = none -%}
    {%- if keep == 'publisher' -%}
        {%- set outcome = 'closed: the publisher row stays' -%}
    {%- elif winner == 'subscriber' -%}
        {%- set outcome = 'closed: the subscriber won when the conflict arose; its row was applied then' -%}
    {%- else -%}
        {%- set now = run_query(row_now).rows -%}
        {%- set mine = run_query('select ' ~ version).rows[0][0] -%}
        {%- set current = now[0][0] if now else none -%}
        {%- if (is_delete and not now and (conflict_type == 'delete_missing' or recorded is not none)) or (not is_delete and current == mine) -%}
            {#- already as the subscriber had it: absent, or this resolution's own earlier write -#}
            {%- set outcome = 'subscriber row applied' if current == mine else 'subscriber delete applied: the row is absent' -%}
        {%- elif (now | length > 0) != (recorded is not none) or (now and (current != recorded or not now[0][1])) -%}
            {%- set what = ('version ' ~ current ~ ' kept') if (now and current == recorded)
                else ('it now holds ' ~ (current if now else 'no row') ~ ', the conflict recorded ' ~ (recorded or 'no row')) -%}
            {%- if now and recorded is not none and not now[0][1] -%}
                {%- set what = what ~ '; changed: ' ~ (now[0][2] or 'its row image') -%}
            {%- endif -%}
            {{ exceptions.raise_compiler_error("qrepl: conflict " ~ conflict_id ~ ": the publisher row changed since the conflict ("
                ~ what ~ "): resolve it by a new change, or keep the publisher") }}
        {%- else -%}
            {%- set columns = [] -%}
            {%- for name, type in article.columns -%}{%- do columns.append(name) -%}{%- endfor -%}
            {%- call statement('qrepl_resolve_merge', fetch_result=false) -%}
                merge into {{ table }} as target
                using (
                    select
                        parsed.*,
                        c.publisher_version as qrepl_expected,
                        c.publisher_row as qrepl_recorded,
                        {{ version }} as qrepl_version
                    from {{ conflicts }} as c
                    lateral view inline(array(from_json(
                        {{ 'c.row_key' if is_delete else 'c.subscriber_row' }},
                        '{{ key_ddl if is_delete else article_schema_ddl(article) }}'
                    ))) parsed
                    where c.conflict_id = '{{ conflict_id }}'
                ) as source
                on {{ on | join(' and ') }}
                {%- if is_delete %}
                when matched and target.msrepl_tran_version <=> source.qrepl_expected
                    and {{ image_now }} <=> source.qrepl_recorded then delete
                {%- else %}
                when matched and target.msrepl_tran_version <=> source.qrepl_expected
                    and {{ image_now }} <=> source.qrepl_recorded then update set
                    {%- for c in columns %}
                    target.{{ c }} = source.{{ c }},
                    {%- endfor %}
                    target.msrepl_tran_version = source.qrepl_version
                when not matched and source.qrepl_expected is null then insert ({{ columns | join(', ') }}, msrepl_tran_version)
                    values ({% for c in columns %}source.{{ c }}, {% endfor %}source.qrepl_version)
                {%- endif %}
            {%- endcall -%}
            {%- set after = run_query(row_now).rows -%}
            {%- if (is_delete and after) or (not is_delete and (not after or after[0][0] != mine)) -%}
                {{ exceptions.raise_compiler_error("qrepl: conflict " ~ conflict_id ~ ": the publisher row changed while it was being resolved: nothing written; try again") }}
            {%- endif -%}
            {%- set outcome = 'subscriber delete applied' if is_delete else 'subscriber row applied' -%}
        {%- endif -%}
    {%- endif -%}
    {%- call statement('qrepl_resolve_review', fetch_result=false) -%}
        insert into {{ reviews }}
        select
            '{{ conflict_id }}', '{{ keep }}', '{{ outcome }}', '{{ who }}', current_timestamp(),
            {{ version if (keep == 'subscriber' and winner != 'subscriber' and not is_delete) else 'cast(null as string)' }}
    {%- endcall -%}
    {{ log("qrepl: conflict " ~ conflict_id ~ " resolved, keep " ~ keep ~ ": " ~ outcome, info=true) }}
{% endmacro %}
