{% macro qrepl_remove_conflicts(conflict_ids, removed_by='') %}
    {#- Conflicts removed from the lists after review, as a run-operation:
            dbt run-operation qrepl_remove_conflicts --args '{conflict_ids: [...]}'
        (`qrepl conflicts --remove ID ...` runs this same macro).

        SQL Server's conflict viewer deletes a removed conflict. Here the conflicts mart is
        written only by dbt's model (and its retention purge), so a removal is a review row:
        one row of conflict_reviews per conflict, outcome 'removed', who and when. `qrepl
        conflicts`, the viewer and `qrepl status` leave removed conflicts out; the retention
        purge deletes them in time like any other. Nothing else changes: the publisher keeps
        its row, and a conflict delivered to its subscriber stays in the subscriber's copy.
        Removing again, or an id that no conflict has, records nothing; a conflict of a batch a
        failed run left unfinished can be removed too (the finishing run does not write it again). -#}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set ids = [conflict_ids] if conflict_ids is string else conflict_ids -%}
    {%- if ids | length == 0 -%}
        {{ exceptions.raise_compiler_error("qrepl: conflict_ids is empty: name the conflicts `qrepl conflicts` shows") }}
    {%- endif -%}
    {%- for conflict_id in ids -%}
        {%- do _qrepl_conflict_id(conflict_id, 'a conflict_id') -%}
    {%- endfor -%}
    {%- set who = _qrepl_reviewer(removed_by, 'removed_by') -%}
    {%- set conflicts = qrepl_relation('conflicts') -%}
    {%- if load_relation(conflicts) is none -%}
        {{ log("qrepl: removed 0 conflict(s): no conflict was ever logged", info=true) }}
        {{ return('') }}
    {%- endif -%}
    {%- set reviews = _qrepl_conflict_reviews() -%}
    {%- set chosen -%}
        select distinct c.conflict_id
        from {{ conflicts }} as c
        left anti join (select conflict_id from {{ reviews }} where outcome = 'removed') as r
            on c.conflict_id = r.conflict_id
        where c.conflict_id in ('{{ ids | join("', '") }}')
    {%- endset -%}
    {%- set count = run_query('select count(*) from (' ~ chosen ~ ')').rows[0][0] -%}
    {%- if count > 0 -%}
        {%- call statement('qrepl_remove_review', fetch_result=false) -%}
            insert into {{ reviews }}
            select conflict_id, cast(null as string), 'removed', '{{ who }}', current_timestamp(), cast(null as string)
            from ({{ chosen }})
        {%- endcall -%}
    {%- endif -%}
    {{ log("qrepl: removed " ~ count ~ " conflict(s)", info=true) }}
{% endmacro %}
