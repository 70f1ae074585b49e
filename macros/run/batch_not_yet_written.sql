{% macro batch_not_yet_written(batch_id) %}
    {#- Guard for the per-batch incremental models: a rerun after a crash must not write a
        batch twice. Iceberg inserts are atomic, so a batch is in a table whole or not at all. -#}
    {%- if is_incremental() -%}
        not exists (select 1 from {{ this }} as already_written where already_written.batch_id = {{ batch_id }})
    {%- else -%}
        true
    {%- endif -%}
{% endmacro %}
