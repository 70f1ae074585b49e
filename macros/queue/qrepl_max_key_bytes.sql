{% macro qrepl_max_key_bytes() %}
    {#- A queued row_key longer than this (UTF-8 bytes) is quarantined as an oversize key
        (model.MAX_KEY_BYTES: a D command's key, bounded as an I or U command's row is). -#}
    {{ return(65536) }}
{% endmacro %}
