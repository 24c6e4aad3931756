"""autograph.operators"""
