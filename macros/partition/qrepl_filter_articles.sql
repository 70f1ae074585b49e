{% macro qrepl_filter_articles(filters) %}
    {#- The articles some filter of the batch names, once each, in the order the filters name them. -#}
    {%- set names = [] -%}
    {%- set articles = [] -%}
    {%- for f in filters if f.article.name not in names -%}
        {%- do names.append(f.article.name) -%}{%- do articles.append(f.article) -%}
    {%- endfor -%}
    {{ return(articles) }}
{% endmacro %}
