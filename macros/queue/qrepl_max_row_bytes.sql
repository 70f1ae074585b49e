{% macro qrepl_max_row_bytes() %}
    {#- A queued new_row longer than this (UTF-8 bytes) is quarantined as an oversize row
        (model.MAX_ROW_BYTES). -#}
    {{ return(65536) }}
{% endmacro %}
