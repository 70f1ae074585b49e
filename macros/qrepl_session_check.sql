{% macro spark__list_relations_without_caching(relation) %}
    {#- dbt-spark's, unchanged, after qrepl_check_session: the first statements dbt runs in an
        invocation list the relations of each schema (its relation cache). -#}
    {%- do qrepl_check_session() -%}
    {{ return(dbt.spark__list_relations_without_caching(relation)) }}
{% endmacro %}


{% macro qrepl_check_session() %}
    {#- Plain dbt on the embedded `local` target (profiles.yml) starts its Spark session from the
        state directory's conf/, which qrepl commands write (the Iceberg jar link and logging),
        next to the metastore's lock tables Iceberg commits need. On a fresh state directory
        the jar is missing and every statement would fail on a Java class: one line instead. -#}
    {%- if target.method == 'session' -%}
        {%- set iceberg = [] -%}
        {%- for row in run_query('list jars').rows if 'iceberg' in row[0] -%}
            {%- do iceberg.append(row[0]) -%}
        {%- endfor -%}
        {%- if not iceberg -%}
            {%- set msg -%}
qrepl: the Spark session has no Iceberg runtime: state directory {{ env_var('QREPL_STATE_DIR', '.qrepl_state') }} has not been set up by qrepl yet; run a qrepl command on it first (e.g. `qrepl publication create --config FILE`, with the same QREPL_STATE_DIR)
            {%- endset -%}
            {{ exceptions.raise_compiler_error(msg) }}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}
