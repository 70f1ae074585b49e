{% macro qrepl_renew_run_lock() %}
    {#- A model's pre-hook (dbt_project.yml): a plain `dbt run` / `dbt build` renews the lease
        of the run lock it took, at the start of a model, once lease/4 seconds have passed since
        its last renewal by this process's own clock (so most models add no commit). Nothing
        renews it while one model runs: its lease (QREPL_PLAIN_RUN_LEASE_SECONDS, default 900)
        bounds the longest model. The lock of `qrepl run` is renewed by its lease keeper
        instead. One dbt thread at a time renews (it takes the one ticket the run state holds),
        so two models starting at once on two threads make no two commits on the lock's row. -#}
    {%- if qrepl_is_running() and not _qrepl_run_lock_renewed_by_qrepl() -%}
        {%- set state = qrepl_run_state('run_lock', {}) -%}
        {%- set last = state.pop('renewed', none) -%}
        {%- if last is not none -%}
            {%- set now = modules.datetime.datetime.utcnow() -%}
            {%- if (now - last).total_seconds() * 4 >= state.get('lease', 0) -%}
                {%- call statement('qrepl_renew_run_lock', fetch_result=false) -%}
                    update {{ _qrepl_identifier(target.schema, 'schema') }}.qrepl_run_lock
                    set renewals = renewals + 1, renewed_at = current_timestamp()
                    where token = '{{ _qrepl_run_lock_token() }}'
                {%- endcall -%}
                {%- set last = now -%}
            {%- endif -%}
            {%- do state.update({'renewed': last}) -%}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}
