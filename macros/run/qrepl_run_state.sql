{% macro qrepl_run_state(key, empty) %}
    {#- A value this run builds up as it goes (a list or a dict), starting as `empty` the first
        time a node asks for `key`: the models the materialization skipped, the snapshots the
        publisher's trigger examined. Kept beside qrepl_run_cache's values, for this invocation
        only. Created with one dict.setdefault, so two nodes on two dbt threads that ask at once
        get the same value, and an append to a list is one step, so neither is lost. -#}
    {{ return(_qrepl_run_values().setdefault(key, empty)) }}
{% endmacro %}
