{% macro apply_publisher_changes(batch_id) %}
    {#- Merge a batch of publisher_changes into each article's Iceberg table by compare-and-swap:
        a row is changed only while it still holds the state the batch was resolved against:
        that version and that whole row image (the cut's `root_row`, rendered the same way from
        the row as it is now), or absence for a row the batch inserts. The row is the evidence
        (docs/spec.md §10): a publisher-local write that landed after the publisher's trigger
        looked, even one that kept the version, is never overwritten: it counts as made after
        the batch, and `batch_applied` reports the row as kept. Running it again after a
        crash changes nothing that is already applied (the row then holds the batch's own
        version, which is not the expected one). An article the batch does not change gets no
        MERGE (macro qrepl_batch_writes): an empty MERGE still commits a snapshot, and it
        would contend with publisher-local writers to that table for nothing. Each MERGE's own
        snapshot is then recorded for the publisher's trigger when nothing else can be in it
        (macro qrepl_stamp_own_merge), so the next run does not read its files again.
        Decides docs/spec.md 5.7 (subscriber_wins). -#}
    {%- if qrepl_is_running() -%}
        {%- set publication = qrepl_config() -%}
        {%- set changes = ref('publisher_changes') -%}
        {%- set cut = ref('int_batch_commands') -%}
        {%- set changed = qrepl_batch_writes().articles -%}
        {%- set stamps = [] -%}
        {%- for article in publication.articles if article.name in changed -%}
            {%- set conditions = [] -%}
            {%- for k in article.key -%}
                {%- do conditions.append('target.' ~ k ~ ' = source.' ~ k) -%}
            {%- endfor -%}
            {%- set columns = [] -%}
            {%- for name, type in article.columns -%}
                {%- do columns.append(name) -%}
            {%- endfor -%}
            {%- do columns.append('msrepl_tran_version') -%}
            {%- call statement('apply_' ~ article.name, fetch_result=false) -%}
                merge into {{ qrepl_article_relation(article) }} as target
                using (
                    with cut_rows as (
                        -- each changed row's image at the cut, the same on every command of the row
                        select row_key, max(root_row) as root_row
                        from {{ cut }}
                        where batch_id = {{ batch_id }} and article = '{{ article.name }}' and reject_reason is null
                        group by row_key
                    )
                    select
                        changes.change_op as qrepl_change_op,
                        changes.expected_exists as qrepl_expected_exists,
                        changes.expected_version as qrepl_expected_version,
                        cut.root_row as qrepl_expected_row,
                        parsed.*
                    from {{ changes }} as changes
                    left join cut_rows as cut on changes.row_key = cut.row_key
                    lateral view inline(array(from_json(
                        changes.row, '{{ article_schema_ddl(article) }}, msrepl_tran_version STRING'
                    ))) parsed
                    where changes.batch_id = {{ batch_id }} and changes.article = '{{ article.name }}'
                        and changes.change_op = 'upsert'
                    union all
                    select
                        changes.change_op as qrepl_change_op,
                        changes.expected_exists as qrepl_expected_exists,
                        changes.expected_version as qrepl_expected_version,
                        cut.root_row as qrepl_expected_row,
                        parsed.*
                    from {{ changes }} as changes
                    left join cut_rows as cut on changes.row_key = cut.row_key
                    lateral view inline(array(named_struct(
                        {%- for name, type in article.columns %}
                        '{{ name }}', {% if name in article.key %}{{ typed_key_expr(article, 'changes.row_key') }}.{{ name }}{% else %}cast(null as {{ type }}){% endif %},
                        {%- endfor %}
                        'msrepl_tran_version', cast(null as string)
                    ))) parsed
                    where changes.batch_id = {{ batch_id }} and changes.article = '{{ article.name }}'
                        and changes.change_op = 'delete'
                ) as source
                on {{ conditions | join(' and ') }}
                when matched and source.qrepl_expected_exists
                    and target.msrepl_tran_version <=> source.qrepl_expected_version
                    and {{ row_json_expr(article, 'target.', 'target.msrepl_tran_version') }} <=> source.qrepl_expected_row
                    and source.qrepl_change_op = 'delete' then delete
                when matched and source.qrepl_expected_exists
                    and target.msrepl_tran_version <=> source.qrepl_expected_version
                    and {{ row_json_expr(article, 'target.', 'target.msrepl_tran_version') }} <=> source.qrepl_expected_row then update set
                    {%- for c in columns %}
                    target.{{ c }} = source.{{ c }}{{ ',' if not loop.last }}
                    {%- endfor %}
                when not matched and not source.qrepl_expected_exists and source.qrepl_change_op = 'upsert'
                    then insert ({{ columns | join(', ') }})
                    values ({% for c in columns %}source.{{ c }}{{ ', ' if not loop.last }}{% endfor %})
            {%- endcall -%}
            {%- set stamp = qrepl_stamp_own_merge(article) -%}
            {%- if stamp is not none -%}
                {%- do stamps.append(stamp) -%}
            {%- endif -%}
        {%- endfor -%}
        {%- if stamps -%}
            {#- the MERGEs' own snapshots, which the publisher's trigger need not read again
                (macro qrepl_stamp_own_merge): one commit for every article -#}
            {%- call statement('apply_stamps', fetch_result=false) -%}
                insert into {{ qrepl_relation('publisher_stamps') }} values {{ stamps | join(', ') }}
            {%- endcall -%}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}
