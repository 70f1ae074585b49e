{% macro qrepl_filter_images(filters, image_column, name) %}
    {#- One column per article the batch's filters name, `qrepl_<name>__<article>`: the JSON row
        image in `image_column` of that article's commands, read by from_json with the types of
        the columns its filters read (row images are Spark's own JSON, which these types read
        back exactly); NULL for another article's commands. Each column is preceded by a comma,
        to follow a select list. -#}
    {%- set columns = [] -%}
    {%- for article in qrepl_filter_articles(filters) -%}
        {%- do columns.append(
            ", case when article = '" ~ article.name ~ "' then from_json(" ~ image_column ~ ", '"
            ~ qrepl_filter_columns_ddl(article, filters) ~ "') end as qrepl_" ~ name ~ "__" ~ article.name
        ) -%}
    {%- endfor -%}
    {{ return(columns | join('\n')) }}
{% endmacro %}
