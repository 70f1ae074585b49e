{% macro get_insert_into_sql(source_relation, target_relation) %}
    {#- dbt-spark's append of an incremental model's new rows, except that a column the table
        has and the model no longer selects is given null instead of failing the insert. A mart
        created by an earlier qrepl keeps a column that qrepl has since moved out of it (the
        compensating_commands' delivered_at, which distribution now records in its own table
        compensation_deliveries): its old values stay, new rows have none.
        The new rows' columns are described only when the table has a column the model's yml
        does not document, so an ordinary run pays no extra describe per append; a documented
        column the model does not select fails the append loudly, as dbt-spark's own does. -#}
    {%- set dest_columns = adapter.get_columns_in_relation(target_relation) -%}
    {%- set documented = (model.columns or {}).keys() | map('lower') | list -%}
    {%- set undocumented = [] -%}
    {%- for column in dest_columns if column.name | lower not in documented -%}
        {%- do undocumented.append(column.name) -%}
    {%- endfor -%}
    {%- if undocumented -%}
        {%- set selected = adapter.get_columns_in_relation(source_relation) | map(attribute='name') | map('lower') | list -%}
    {%- else -%}
        {%- set selected = documented -%}
    {%- endif -%}
    insert into table {{ target_relation }}
    select
    {%- for column in dest_columns %}
        {{ column.quoted if column.name | lower in selected else 'cast(null as ' ~ column.data_type ~ ') as ' ~ column.quoted }}{{ ',' if not loop.last }}
    {%- endfor %}
    from {{ source_relation }}
{% endmacro %}
