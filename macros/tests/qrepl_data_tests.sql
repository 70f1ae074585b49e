{% macro _qrepl_newest_batches(column) %}
    {#- The condition that keeps a qrepl data test to the newest batches: `column` from the
        newest finished batch (the highest batch_id of queue_reader_history) on, as a literal,
        so Iceberg skips the older data files and the test's cost follows the batch, not the
        history. In the queue reader's own `dbt build` that is the batch before this run's, and
        this run's; the history is not ref'd, so the tests of a mart still run before
        batch_applied and stop the run before anything is applied (the tests to
        queue_reader_history ref it, and run after its row). Any other invocation (a `dbt test`
        beside a running reader) reads that finished batch alone: the next may be half written. -#}
    {%- if not execute -%}
        {{ return(column ~ ' >= 0') }}
    {%- endif -%}
    {%- set newest = qrepl_run_cache('newest_finished_batch', _qrepl_newest_finished_batch_read) -%}
    {%- if qrepl_is_running() and qrepl_reader_selected() -%}
        {{ return(column ~ ' >= ' ~ newest) }}
    {%- endif -%}
    {{ return(column ~ ' = ' ~ newest) }}
{% endmacro %}


{% macro _qrepl_newest_finished_batch_read() %}
    {#- _qrepl_newest_batches' read: the highest batch_id of queue_reader_history, 0 before the
        first run. -#}
    {%- set history = qrepl_relation('queue_reader_history') -%}
    {%- if not qrepl_relation_exists(history) -%}
        {{ return(0) }}
    {%- endif -%}
    {{ return(run_query('select coalesce(max(batch_id), 0) from ' ~ history).rows[0][0] | int) }}
{% endmacro %}


{% test qrepl_unique_in_newest_batches(model, column_names) %}
    {#- The rows of the newest batches that share column_names with another (a mart's grain,
        batch_id among them). -#}
    select
        {{ column_names | join(', ') }},
        count(*) as rows_with_this_key
    from {{ model }}
    where {{ _qrepl_newest_batches('batch_id') }}
    group by {{ column_names | join(', ') }}
    having count(*) > 1
{% endtest %}


{% test qrepl_relationships_in_newest_batches(model, column_names, to, to_columns) %}
    {#- The keys (column_names, all set) of the newest batches' rows that `to` has no row with
        (to_columns, pairwise). Both sides read the newest batches only, so batch_id is one of
        column_names and the matching to_column is `to`'s batch column. -#}
    {%- if 'batch_id' not in column_names or column_names | length != to_columns | length -%}
        {{ exceptions.raise_compiler_error(
            "qrepl_relationships_in_newest_batches: column_names must name batch_id, and to_columns as many columns") }}
    {%- endif -%}
    {%- set to_batch = to_columns[column_names.index('batch_id')] -%}
    with

    child as (

        select distinct {{ column_names | join(', ') }}
        from {{ model }}
        where {{ _qrepl_newest_batches('batch_id') }}
        {%- for column in column_names %}
            and {{ column }} is not null
        {%- endfor %}

    ),

    parent as (

        select distinct {{ to_columns | join(', ') }}
        from {{ to }}
        where {{ _qrepl_newest_batches(to_batch) }}

    )

    select child.*
    from child
    left anti join parent
        on
        {%- for column in column_names %}
            {{ 'and ' if not loop.first }}child.{{ column }} = parent.{{ to_columns[loop.index0] }}
        {%- endfor %}
{% endtest %}
