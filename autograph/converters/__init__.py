"""autograph.converters"""
