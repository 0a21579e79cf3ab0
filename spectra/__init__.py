"""spectra"""
