{% macro qrepl_release_run_lock() %}
    {#- Drop the run lock if this run holds it, never another run's lock: a compare-and-delete.
        One MERGE replaces the row's token, if it is still this run's, by a release token of
        this run, and the table is dropped only if that token reads back: a lock removed in the
        meantime (`qrepl unlock`, or a recovery that judged this run dead) and taken by another
        run is left alone. The lock of `qrepl run` is left to it (qrepl_run_lock_renewed_by_qrepl):
        its lease keeper may renew at this very moment, and of two MERGEs on the lock's row one
        fails its commit, which here would fail the run; `qrepl run` releases it the same way
        once its lease keeper stopped (python/qrepl/storage/run_lock.py, release_if_mine). -#}
    {%- if qrepl_is_running() and not _qrepl_run_lock_renewed_by_qrepl() and not qrepl_run_is_idle() -%}
        {%- set held = _qrepl_run_lock_holder() -%}
        {%- if held is not none and held.invocation_id == invocation_id -%}
            {%- set lock = _qrepl_identifier(target.schema, 'schema') ~ '.qrepl_run_lock' -%}
            {%- set mine = _qrepl_run_lock_token() -%}
            {%- set claim = 'released-' ~ mine -%}
            {%- call statement('qrepl_release_run_lock_claim', fetch_result=false) -%}
                merge into {{ lock }} as lock
                using (select '{{ mine }}' as token, '{{ claim }}' as claim) as judged
                on lock.token = judged.token
                when matched then update set
                    lock.token = judged.claim,
                    lock.renewals = lock.renewals + 1,
                    lock.renewed_at = current_timestamp()
            {%- endcall -%}
            {%- set tokens = run_query('select token from ' ~ lock) -%}
            {%- if tokens.rows | length == 1 and tokens.rows[0][0] == claim -%}
                {%- call statement('qrepl_release_run_lock', fetch_result=false) -%}
                    drop table if exists {{ lock }} purge
                {%- endcall -%}
            {%- endif -%}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}
