{% macro qrepl_columns_sent(column_lists, alias, kind) -%}
    {#- Whether a command's new_row holds a column its subscription does not take ('extra') or
        lacks one it takes ('missing'). The article's columns for a subscription that takes them
        all (row_extra_columns, row_missing_column of queued_rows_typed_sql); its list for one
        with a column filter, whose rows are never canonical (they leave columns out), so their
        field names are read here, for those commands alone. -#}
    {%- set generic = alias ~ ('.row_extra_columns' if kind == 'extra' else '.row_missing_column') -%}
    {%- if not column_lists -%}
        {{ generic }}
    {%- else -%}
        case
            {%- for entry in column_lists %}
                {%- set names = [] -%}
                {%- for c in entry.columns %}{% do names.append("'" ~ c ~ "'") %}{% endfor %}
                when {{ alias }}.subscriber = '{{ entry.subscriber }}' and {{ alias }}.article = '{{ entry.article.name }}' then
                {%- if kind == 'extra' %}
                    size(array_except(json_object_keys({{ alias }}.new_row), array({{ names | join(', ') }}))) > 0
                {%- else %}
                    not ({% for c in entry.columns %}array_contains(json_object_keys({{ alias }}.new_row), '{{ c }}'){{ ' and ' if not loop.last }}{% endfor %})
                {%- endif %}
            {%- endfor %}
            else {{ generic }}
        end
    {%- endif -%}
{%- endmacro %}
