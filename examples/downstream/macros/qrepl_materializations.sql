{#- qrepl overrides two of dbt-spark's built-in materializations (a batch with nothing to
    write skips its models; unit tests on Iceberg). dbt uses a package's override of a built-in
    only when the root project names it, as here (docs/dbt-package.md). -#}

{%- materialization incremental, adapter='spark', supported_languages=['sql', 'python'] -%}
  {{ return(qrepl.materialization_incremental_spark()) }}
{%- endmaterialization -%}

{%- materialization unit, adapter='spark' -%}
  {{ return(qrepl.materialization_unit_spark()) }}
{%- endmaterialization -%}
