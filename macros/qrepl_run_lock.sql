{% macro qrepl_acquire_run_lock() %}
    {#- One queue reader at a time per publication (one schema holds one publication). The
        lock is a table, `qrepl_run_lock`, created by an atomic CREATE TABLE ... AS SELECT:
        the metastore lets exactly one creator win, on the embedded Derby metastore, a shared
        PostgreSQL one and through a Thrift server alike. Its properties name the holder.
        A second `dbt run` / `qrepl run` fails fast here, naming the holder; `on-run-end`
        releases the lock (also after a failed model); a lock left by a killed process is
        removed with `qrepl unlock` (and `qrepl run` removes it itself when the holder was a
        qrepl process on this host that no longer exists). -#}
    {%- if qrepl_is_running() -%}
        {%- set schema = _qrepl_identifier(target.schema, 'schema') -%}
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
            as select 1 as held
        {%- endcall -%}
    {%- endif -%}
{% endmacro %}


{% macro qrepl_release_run_lock() %}
    {#- Drop the run lock if this invocation holds it (never another run's lock). -#}
    {%- if qrepl_is_running() -%}
        {%- set held = _qrepl_run_lock_holder() -%}
        {%- if held is not none and held.invocation_id == invocation_id -%}
            {%- call statement('qrepl_release_run_lock', fetch_result=false) -%}
                drop table if exists {{ _qrepl_identifier(target.schema, 'schema') }}.qrepl_run_lock purge
            {%- endcall -%}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}


{% macro _qrepl_run_lock_holder() %}
    {#- The current lock's properties (holder, invocation_id, acquired_at), or none. Asks the
        metastore, not dbt's relation cache, which may predate a concurrent run's lock. -#}
    {%- set schema = _qrepl_identifier(target.schema, 'schema') -%}
    {%- set tables = run_query("show tables in " ~ schema ~ " like 'qrepl_run_lock'") -%}
    {%- if tables.rows | length == 0 -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set props = {'holder': 'unknown holder', 'invocation_id': '', 'acquired_at': 'unknown time'} -%}
    {%- for row in run_query('show tblproperties ' ~ schema ~ '.qrepl_run_lock').rows -%}
        {%- if row[0].startswith('qrepl.') -%}
            {%- do props.update({row[0][6:]: row[1]}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(props) }}
{% endmacro %}


{% macro _qrepl_run_lock_holder_text() %}
    {#- Who holds the lock, for the message a second run prints: `qrepl run` names its process
        (QREPL_RUN_HOLDER, read only while executing so dbt does not re-parse); plain dbt its
        invocation. Only safe characters reach the SQL text. -#}
    {%- set named = env_var('QREPL_RUN_HOLDER', '') -%}
    {%- set text = named if named else 'dbt invocation ' ~ invocation_id -%}
    {{ return(modules.re.sub('[^A-Za-z0-9 _.:@=/-]', '_', text)[:200]) }}
{% endmacro %}
