{% macro qrepl_run_cache(key, read, argument=none) %}
    {#- What `read()` returns, read by the first node of this run that asks for `key` and kept
        for every later one: for what a run reads once and every node needs (the publication's
        configuration, the batch id). The values are kept in dbt's `graph` context variable,
        the one dict dbt builds per invocation and hands to every node and hook, under this
        invocation's id, so a later invocation in the same process (qrepl runs several) reads
        them again. Each read costs a Spark job on an Iceberg table, and every node asked
        for them. `read(argument)` when an argument is given. -#}
    {%- set values = _qrepl_run_values() -%}
    {%- if key not in values -%}
        {%- do values.update({key: read() if argument is none else read(argument)}) -%}
    {%- endif -%}
    {{ return(values[key]) }}
{% endmacro %}


{% macro _qrepl_run_values() %}
    {#- This invocation's dict of per-run values (qrepl_run_cache, qrepl_run_state), in dbt's
        `graph` context variable under the invocation id; an earlier invocation's are dropped. -#}
    {%- set runs = graph.setdefault('qrepl_run_cache', {}) -%}
    {%- if invocation_id not in runs -%}
        {%- do runs.clear() -%}
        {%- do runs.setdefault(invocation_id, {}) -%}
    {%- endif -%}
    {{ return(runs[invocation_id]) }}
{% endmacro %}
