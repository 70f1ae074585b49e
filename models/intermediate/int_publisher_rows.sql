{#- Union of every article's publisher table; the articles come from the publication config
    at run time, so the view is rebuilt each run. -#}
{%- set publication = qrepl_config() -%}

with

publisher_rows as (
    {{ publisher_rows_sql(publication) }}
)

select * from publisher_rows
