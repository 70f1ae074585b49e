{% macro qrepl_acquire_run_lock() %}
    {#- One queue reader at a time per publication (one schema holds one publication). The
        lock is a table, `qrepl_run_lock`, created by an atomic CREATE TABLE ... AS SELECT:
        the metastore lets exactly one creator win, on the embedded Derby metastore, a shared
        PostgreSQL one and through a Thrift server alike. Its properties name the holder.
        A second `dbt run` / `qrepl run` fails fast here, naming the holder; `on-run-end`
        releases the lock (also after a failed model).
        Its one row is the holder's lease (python/qrepl/storage/run_lock.py): a token, a renewal
        count, the time it was last renewed and lease_seconds. `qrepl run` passes its token
        and lease (QREPL_RUN_TOKEN, QREPL_RUN_LEASE) and renews the lease from a thread while
        it runs. A plain `dbt run` (a scheduler on a Thrift server, a CI job) renews its own at
        the start of its models (qrepl_renew_run_lock), with a lease of
        QREPL_PLAIN_RUN_LEASE_SECONDS (default 900), which bounds its longest model. A lock
        whose holder died is recovered by the next `qrepl run` once its lease stayed unrenewed
        that long. Only when the invocation runs a reader model (qrepl_reader_selected), and
        not when the run has nothing to do (qrepl_run_is_idle: it then writes nothing). -#}
    {%- if qrepl_is_running() and qrepl_reader_selected() -%}
        {%- set schema = _qrepl_identifier(target.schema, 'schema') -%}
        {#- a schema with no publication (a plain `dbt build` with the wrong QREPL_SCHEMA, or
            before `qrepl publication create`): one line, before anything is written -#}
        {%- if run_query("show tables in " ~ schema ~ " like 'qrepl_publication'").rows | length == 0 -%}
            {%- set msg -%}
qrepl: schema {{ schema }} holds no publication: create one first (`qrepl publication create --config FILE --schema {{ schema }}`), or set QREPL_SCHEMA to the publication's schema
            {%- endset -%}
            {{ exceptions.raise_compiler_error(msg) }}
        {%- endif -%}
        {#- a run with nothing to do takes no lock and writes nothing (macro qrepl_run_is_idle) -#}
        {%- if qrepl_run_is_idle() -%}
            {{ return('') }}
        {%- endif -%}
        {%- set held = _qrepl_run_lock_holder() -%}
        {%- if held is not none -%}
            {%- set msg -%}
qrepl: the queue reader of schema {{ schema }} is already running ({{ held.holder }}, since {{ held.acquired_at }}); wait for it to finish; if that process is dead, `qrepl run --wait SECONDS` recovers its lock once its lease stays unrenewed (or `qrepl unlock --schema {{ schema }}`)
            {%- endset -%}
            {{ exceptions.raise_compiler_error(msg) }}
        {%- endif -%}
        {%- call statement('qrepl_acquire_run_lock', fetch_result=false) -%}
            create table {{ schema }}.qrepl_run_lock
            using iceberg
            tblproperties (
                'qrepl.holder' = '{{ _qrepl_run_lock_holder_text() }}',
                'qrepl.invocation_id' = '{{ invocation_id }}',
                'qrepl.acquired_at' = '{{ run_started_at.strftime("%Y-%m-%d %H:%M:%S") }} UTC'
            )
            as select
                '{{ _qrepl_run_lock_token() }}' as token,
                cast(0 as bigint) as renewals,
                current_timestamp() as renewed_at,
                cast({{ _qrepl_run_lock_lease() }} as int) as lease_seconds
        {%- endcall -%}
        {%- if not _qrepl_run_lock_renewed_by_qrepl() -%}  {#- this run renews it (qrepl_renew_run_lock) -#}
            {%- do qrepl_run_state('run_lock', {}).update({'lease': _qrepl_run_lock_lease() | int,
                                                          'renewed': modules.datetime.datetime.utcnow()}) -%}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}


{% macro _qrepl_run_lock_holder_text() %}
    {#- Who holds the lock, for the message a second run prints: `qrepl run` names its process
        (QREPL_RUN_HOLDER, read only while executing so dbt does not re-parse); plain dbt its
        invocation. Only safe characters reach the SQL text. -#}
    {%- set named = env_var('QREPL_RUN_HOLDER', '') -%}
    {%- set text = named if named else 'dbt invocation ' ~ invocation_id -%}
    {{ return(modules.re.sub('[^A-Za-z0-9 _.:@=/-]', '_', text)[:200]) }}
{% endmacro %}


{% macro _qrepl_run_lock_lease() %}
    {#- The lease in seconds: `qrepl run`'s (QREPL_RUN_LEASE, set only while its lease keeper
        runs), else a plain run's (QREPL_PLAIN_RUN_LEASE_SECONDS, default 900). -#}
    {%- if _qrepl_run_lock_renewed_by_qrepl() -%}
        {{ return(env_var('QREPL_RUN_LEASE')) }}
    {%- endif -%}
    {%- set lease = env_var('QREPL_PLAIN_RUN_LEASE_SECONDS', '') -%}
    {{ return(lease if modules.re.fullmatch('[1-9][0-9]{0,6}', lease) else '900') }}
{% endmacro %}


{% macro _qrepl_run_lock_renewed_by_qrepl() %}
    {#- True in `qrepl run`, whose lease keeper renews the lock (QREPL_RUN_TOKEN and
        QREPL_RUN_LEASE, set only while it runs), and releases it once dbt returned. -#}
    {{ return(modules.re.fullmatch('[1-9][0-9]{0,6}', env_var('QREPL_RUN_LEASE', '')) is not none
              and modules.re.fullmatch('[0-9a-f]{32}', env_var('QREPL_RUN_TOKEN', '')) is not none) }}
{% endmacro %}
