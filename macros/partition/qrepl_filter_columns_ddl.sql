{% macro qrepl_filter_columns_ddl(article, filters) %}
    {#- The DDL of the columns the batch's filters on `article` read, for from_json of a row
        image (row_json_expr's JSON, which from_json reads back exactly for these types). -#}
    {%- set names = [] -%}
    {%- for f in filters if f.article.name == article.name -%}
        {%- for name in _qrepl_filter_tree_columns(f.tree) if name not in names -%}{%- do names.append(name) -%}{%- endfor -%}
    {%- endfor -%}
    {{ return(_qrepl_columns_ddl(article, names)) }}
{% endmacro %}

{% macro _qrepl_columns_ddl(article, names) %}
    {#- The DDL of the article's columns (those of `names`, or all when none), in the article's
        order: what from_json reads a row image by (here, and qrepl_column_images). -#}
    {%- set ddl = [] -%}
    {%- for name, type in article['columns'] if names is none or name in names -%}
        {%- do ddl.append('`' ~ name ~ '` ' ~ type | upper) -%}
    {%- endfor -%}
    {{ return(ddl | join(', ')) }}
{% endmacro %}

{% macro _qrepl_filter_tree_columns(node) %}
    {%- set found = [] -%}
    {%- if node is mapping and 'col' in node -%}
        {%- do found.append(node['col']) -%}
    {%- elif node is mapping -%}
        {%- for arg in node.get('args') or [] -%}{%- do found.extend(_qrepl_filter_tree_columns(arg)) -%}{%- endfor -%}
    {%- endif -%}
    {{ return(found) }}
{% endmacro %}
