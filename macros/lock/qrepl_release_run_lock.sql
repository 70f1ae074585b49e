{% macro qrepl_release_run_lock() %}
    {#- Drop the run lock if this run holds it (never another run's lock): its invocation id
        in the properties and its token in the row. Not a compare-and-swap MERGE: the lease
        keeper of `qrepl run` (python/qrepl/storage/run_lock.py) may renew the lease at this very
        moment, and two MERGEs on the lock's row make one of them fail its commit, which
        here would fail the run. A lock whose lease expired and that another process claimed
        carries that process's token, so it is not dropped here. -#}
    {%- if qrepl_is_running() -%}
        {%- set held = _qrepl_run_lock_holder() -%}
        {%- if held is not none and held.invocation_id == invocation_id -%}
            {%- set lock = _qrepl_identifier(target.schema, 'schema') ~ '.qrepl_run_lock' -%}
            {%- set tokens = run_query('select token from ' ~ lock) -%}
            {%- if tokens.rows | length == 1 and tokens.rows[0][0] == _qrepl_run_lock_token() -%}
                {%- call statement('qrepl_release_run_lock', fetch_result=false) -%}
                    drop table if exists {{ lock }} purge
                {%- endcall -%}
            {%- endif -%}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}
