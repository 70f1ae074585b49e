{% macro qrepl_filter_articles(filters) %}
    {#- The articles some entry of `filters` names (the batch's row filters or column lists), once
        each, in the order the entries name them. -#}
    {%- set names = [] -%}
    {%- set articles = [] -%}
    {%- for f in filters if f.article.name not in names -%}
        {%- do names.append(f.article.name) -%}{%- do articles.append(f.article) -%}
    {%- endfor -%}
    {{ return(articles) }}
{% endmacro %}
