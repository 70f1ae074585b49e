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
        it runs; a lock whose lease expired is recovered by the next `qrepl run`. A plain
        `dbt run` (a scheduler on a Thrift server) has nothing renewing it: its lock has no
        lease (null), never expires, and a lock left by a killed plain run is removed with
        `qrepl unlock`. Only when the invocation runs a reader model (qrepl_reader_selected). -#}
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
        {%- set held = _qrepl_run_lock_holder() -%}
        {%- if held is not none -%}
            {%- set msg -%}
qrepl: the queue reader of schema {{ schema }} is already running ({{ held.holder }}, since {{ held.acquired_at }}); wait for it to finish, or if that process is dead run `qrepl unlock --schema {{ schema }}`
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
    {#- The lease in seconds `qrepl run` renews (QREPL_RUN_LEASE, set only while its lease
        keeper runs), else 'null': no lease, a lock that never expires. -#}
    {%- set lease = env_var('QREPL_RUN_LEASE', '') -%}
    {%- if modules.re.fullmatch('[1-9][0-9]{0,6}', lease) and modules.re.fullmatch('[0-9a-f]{32}', env_var('QREPL_RUN_TOKEN', '')) -%}
        {{ return(lease) }}
    {%- endif -%}
    {{ return('null') }}
{% endmacro %}
